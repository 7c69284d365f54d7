"""GTA behaviours of OpenCompass's ``gta_bench.py`` that faithful mode reproduces (issue 15, items 1, 8, 10).

Expected values were established by running the reference evaluator (``drivers/gta_driver.py`` on the same
files); the tests themselves need no checkout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, select, col

from annotation.formats.api import export_run, import_dataset, import_run
from evaluation.scoring.runner import score_run
from store import events as ev
from store.models import Event, Run, Task, Trajectory
from tests.formats.fixtures import write_gta
from tests.support.must import must

ABS = "/abs/data/gta_dataset"


def tc(name, args, **extra):
    return {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}],
        **extra,
    }


def step_file(path: Path, records: dict) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def gold_of(rec: dict) -> list:
    """The gold OpenCompass writes: assistant turns, dataset file arguments made absolute by the loader."""
    out = []
    for m in rec["dialogs"]:
        if m["role"] != "assistant":
            continue
        m = json.loads(json.dumps(m))
        for call in m.get("tool_calls", []):
            args = call["function"]["arguments"]
            for k, v in args.items():
                if isinstance(v, str) and v.startswith("image/"):
                    args[k] = f"{ABS}/{v}"
        out.append(m)
    return out


@pytest.fixture
def gta4(engine, blobs, tmp_path: Path) -> dict:
    data = write_gta(tmp_path / "src", n=4)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    return data


def test_argacc_compares_arguments_exactly_in_faithful_and_normalises_paths_only_in_fixed(
    engine, blobs, gta4, tmp_path: Path
) -> None:
    spellings = [f"{ABS}/image/image_0.jpg", "image/image_1.jpg", "wrong/image/image_2.jpg", "/tmp/image/image_3.jpg"]
    preds = {}
    for i, spelled in enumerate(spellings):
        gold = gold_of(gta4[str(i)])
        turns = [dict(g) for g in gold]
        turns[0] = tc("OCR", {"image": spelled})
        preds[str(i)] = {"gold": gold, "prediction": turns}
    run = import_run(engine, blobs, "gta", step_file(tmp_path / "p.json", preds), "gta").run_id
    faithful = score_run(engine, run, mode="faithful", embedder="hashing", write=False)
    # reference: 8 gold tool turns; 4 second-turn calls equal the gold, of the OCR calls only the absolute path
    assert faithful.metrics["ArgAcc"] == pytest.approx(5 / 8 * 100)
    assert faithful.corrections == []
    fixed = score_run(engine, run, mode="fixed", embedder="hashing", write=False)
    assert fixed.metrics["ArgAcc"] == pytest.approx(100.0)
    assert "gta-path-normalise" in fixed.corrections


def test_empty_tool_calls_step_scores_with_a_note(engine, blobs, gta4, tmp_path: Path) -> None:
    preds = {}
    for i in range(4):
        gold = gold_of(gta4[str(i)])
        turns = [dict(g) for g in gold]
        turns[0] = {"role": "assistant", "tool_calls": [], "content": "no call"}
        preds[str(i)] = {"gold": gold, "prediction": turns}
    run = import_run(engine, blobs, "gta", step_file(tmp_path / "p.json", preds), "gta").run_id
    res = score_run(engine, run, mode="faithful", embedder="hashing", write=False)
    assert res.metrics["ToolAcc"] == pytest.approx(4 / 8 * 100)  # the empty turns are not tool turns
    assert any("empty tool_calls" in n for n in res.notes)


def test_duplicate_keys_keep_the_last_record_and_numbers_are_read_as_strings(
    engine, blobs, gta4, tmp_path: Path
) -> None:
    gold = gold_of(gta4["0"])
    first = json.dumps(
        {"gold": gold, "prediction": [tc("OCR", {}), tc("Calculator", {}), {"role": "assistant", "content": "wrong"}]}
    )
    last = json.dumps(
        {"gold": gold, "prediction": [tc("OCR", {}), tc("Calculator", {}), {"role": "assistant", "content": 145}]}
    )
    (tmp_path / "p.json").write_text('{"0": %s, "0": %s}' % (first, last), encoding="utf-8")
    summary = import_run(engine, blobs, "gta", tmp_path / "p.json", "gta")
    assert summary.trajectories == 1
    assert any("more than once" in n and "'0'" in n for n in summary.notes)
    assert any("str(number)" in n for n in summary.notes)
    res = score_run(engine, summary.run_id, mode="faithful", embedder="hashing", write=False)
    assert res.metrics["SummAcc"] == pytest.approx(100.0)  # the last record's 145 is sample 0's answer


def _own_e2e_run(engine, tasks_events) -> int:
    with Session(engine) as s:
        tasks = s.exec(select(Task).order_by(col(Task.id))).all()
        run = Run(name="own e2e", benchmark_id=tasks[0].benchmark_id, mode="react", status="done")
        s.add(run)
        s.flush()
        for t in tasks:
            evs = tasks_events(t)
            traj = Trajectory(
                run_id=must(run.id),
                task_id=must(t.id),
                status="done",
                final_answer=next((p["text"] for k, p, _ in evs if k == ev.ANSWER), None),
            )
            s.add(traj)
            s.flush()
            s.add_all(
                [
                    Event(trajectory_id=must(traj.id), ordinal=i, kind=k, payload=p, failed=f)
                    for i, (k, p, f) in enumerate(evs)
                ]
            )
        s.commit()
        return run.id


def test_export_run_keeps_error_on_failed_tool_calls_so_the_reference_counts_them(
    engine, blobs, gta4, tmp_path: Path
) -> None:
    def events(t):
        tool = "DrawBox" if t.source_id == "2" else "Calculator"
        args = {"image": "image/image_2.jpg", "bbox": "(1, 2, 3, 4)"} if tool == "DrawBox" else {"expression": "1+1"}
        return [
            (ev.TOOL_CALL, ev.tool_call("OCR", {"image": f"image/image_{t.source_id}.jpg"}, "c1"), False),
            (ev.TOOL_RESULT, ev.tool_result("OCR", "290 SOFTGELS", call_id="c1"), False),
            (ev.TOOL_CALL, ev.tool_call(tool, args, "c2"), False),
            (ev.TOOL_RESULT, ev.tool_result(tool, "", call_id="c2", ok=False, error="boom"), True),
            (ev.ANSWER, ev.answer("no idea"), False),
        ]

    run = _own_e2e_run(engine, events)
    export_run(engine, blobs, "gta", run, tmp_path / "out.json")
    exported = json.loads((tmp_path / "out.json").read_text())
    failed_steps = [s for s in exported["2"]["prediction"][0] if "error" in s]
    assert [s["tool_calls"][0]["function"]["name"] for s in failed_steps] == ["DrawBox"]
    assert failed_steps[0]["error"]["msg"] == "boom"
    # the reference, on the exported file: 4 failed calls, and the image-generation query scores 0
    # (a failed DrawBox is no DrawBox), so AnsAcc+I is 0 for all four samples
    back = import_run(engine, blobs, "gta", tmp_path / "out.json", "gta").run_id
    for run_id in (run, back):
        m = score_run(engine, run_id, mode="faithful", embedder="hashing", write=False).metrics
        assert (m["tool_call"], m["tool_call_error"]) == (8, 4)
        assert m["AnsAcc+I"] == pytest.approx(0.0)
