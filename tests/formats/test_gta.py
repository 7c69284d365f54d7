from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, select, col

from annotation.formats import FormatError
from annotation.formats.api import export_dataset, export_run, import_dataset, import_run
from store.models import Run, Task, TaskAsset, Trajectory
from store import events as ev
from tests.formats.conftest import run_events
from tests.formats.fixtures import gta_e2e_predictions, gta_step_predictions, write_gta
from tests.support.must import must


def test_import_maps_fields_and_export_reproduces(engine, blobs, tmp_path: Path) -> None:
    data = write_gta(tmp_path / "src", n=4)
    summary = import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert (summary.created, summary.steps) == (4, 4 * 3)
    with Session(engine) as s:
        tasks = {t.source_id: t for t in s.exec(select(Task)).all()}
        assert tasks["0"].answer_spec == {"kind": "whitelist", "groups": [["145"]], "blacklist": None}
        assert tasks["1"].answer_spec["kind"] == "references"
        assert tasks["2"].answer_spec == {"kind": "none"}
        assert tasks["3"].answer_spec["blacklist"] == [["59"]]
        assert tasks["0"].tools_offered == ["OCR", "Calculator"]
        assert tasks["0"].query.startswith("Question 0")
        links = s.exec(select(TaskAsset).where(TaskAsset.task_id == tasks["0"].id)).all()
        assert [(l.role, l.original_path, l.url) for l in links] == [
            ("query_image", "image/image_0.jpg", "https://example.invalid/0.jpg")
        ]
    out = tmp_path / "out"
    export_dataset(engine, blobs, "gta", "gta", out)
    assert json.loads((out / "dataset.json").read_text()) == data
    assert json.loads((out / "toolmeta.json").read_text()) == json.loads(
        (tmp_path / "src" / "toolmeta.json").read_text()
    )
    for i in range(4):
        assert (out / f"image/image_{i}.jpg").read_bytes() == (tmp_path / f"src/image/image_{i}.jpg").read_bytes()


def test_records_rebuilt_from_rows_equal_the_source(engine, blobs, tmp_path: Path) -> None:
    """Edited tasks are exported from their rows; with no real change the record must come out the same."""
    data = write_gta(tmp_path / "src", n=4)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    with Session(engine) as s:
        for t in s.exec(select(Task)).all():
            t.revision += 1  # pretend it was edited: the exporter must rebuild from rows
            s.add(t)
        s.commit()
    export_dataset(engine, blobs, "gta", "gta", tmp_path / "out")
    assert json.loads((tmp_path / "out" / "dataset.json").read_text()) == data


def test_reimport_updates_by_source_id(engine, blobs, tmp_path: Path, counts) -> None:
    data = write_gta(tmp_path / "src", n=3)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    before = counts()
    again = import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
    assert counts() == before
    data["1"]["dialogs"][0]["content"] = "A changed question?"
    (tmp_path / "src" / "dataset.json").write_text(json.dumps(data), encoding="utf-8")
    third = import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert (third.created, third.updated, third.unchanged) == (0, 1, 2)
    with Session(engine) as s:
        t = s.exec(select(Task).where(Task.source_id == "1")).one()
        assert t.query == "A changed question?" and t.revision == 2
        assert len(s.exec(select(Task)).all()) == 3
    export_dataset(engine, blobs, "gta", "gta", tmp_path / "out")
    assert json.loads((tmp_path / "out" / "dataset.json").read_text()) == data


def test_authored_task_exports_as_gta(engine, blobs, tmp_path: Path) -> None:
    from annotation import tasks as authoring
    from store import session_scope
    from tests.formats.fixtures import png

    with session_scope(engine, "ann") as s:
        b = authoring.ensure_benchmark(s, "mine", "gta", tool_set="gta")
        t = authoring.create_task(
            s, b, "What is 2+3?", answer_spec={"kind": "whitelist", "groups": [["5"]]}, tools_offered=["Calculator"]
        )
        authoring.attach_asset(s, blobs, must(t.id), png(1))
        authoring.add_step(
            s, must(t.id), thought="add", tool_name="Calculator", tool_args={"expression": "2+3"}, result_text="5"
        )
        authoring.add_step(s, must(t.id), final_answer="5")
    export_dataset(engine, blobs, "gta", "mine", tmp_path / "out")
    data = json.loads((tmp_path / "out" / "dataset.json").read_text())
    rec = data["0"]  # GTA keys are integers: authored GTA tasks are numbered from 0
    assert rec["dialogs"] == [
        {"role": "user", "content": "What is 2+3?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"type": "function", "function": {"name": "Calculator", "arguments": {"expression": "2+3"}}}
            ],
            "thought": "add",
        },
        {"role": "tool", "name": "Calculator", "content": {"type": "text", "content": "5"}},
        {"role": "assistant", "content": "5"},
    ]
    assert rec["gt_answer"] == {"whitelist": [["5"]], "blacklist": None}
    assert (tmp_path / "out" / rec["files"][0]["path"]).read_bytes() == png(1)
    # and the export imports back as GTA
    summary = import_dataset(engine, blobs, "gta", tmp_path / "out", benchmark="mine-again")
    assert summary.created == 1 and summary.steps == 2


def test_step_predictions_import_as_run_and_export_back(engine, blobs, tmp_path: Path) -> None:
    data = write_gta(tmp_path / "src", n=4)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    preds = gta_step_predictions(data)
    pfile = tmp_path / "pred" / "gta_bench.json"
    pfile.parent.mkdir()
    pfile.write_text(json.dumps(preds), encoding="utf-8")
    summary = import_run(engine, blobs, "gta", pfile, "gta", name="step run")
    assert (summary.mode, summary.trajectories, summary.events) == (
        "step",
        4,
        sum(len(p["prediction"]) for p in preds.values()),
    )
    events = run_events(engine, summary.run_id)
    with Session(engine) as s:
        ids = {t.source_id: t.id for t in s.exec(select(Task)).all()}
        run = s.get(Run, summary.run_id)
        assert must(run).kind == "imported" and must(run).name == "step run"
        traj = s.exec(select(Trajectory).where(Trajectory.task_id == ids["0"])).one()
        assert traj.final_answer == "The answer is 145"
    e0 = events[ids["0"]]
    assert [k for k, _, _ in e0] == [ev.STEP_PREDICTION] * 3
    assert e0[1][1] == {"gold_index": 1, "prediction": preds["0"]["prediction"][1]}
    e1 = events[ids["1"]]
    assert e1[0][2] is True  # the errored prediction is a failed event
    export_run(engine, blobs, "gta", summary.run_id, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == preds


def test_e2e_predictions_import_every_call_and_answer(engine, blobs, tmp_path: Path) -> None:
    data = write_gta(tmp_path / "src", n=2)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    preds = gta_e2e_predictions(data)
    (tmp_path / "gta_bench.json").write_text(json.dumps(preds), encoding="utf-8")
    summary = import_run(engine, blobs, "gta", tmp_path / "gta_bench.json", "gta")
    assert summary.mode == "react"
    events = run_events(engine, summary.run_id)
    with Session(engine) as s:
        ids = {t.source_id: t.id for t in s.exec(select(Task)).all()}
    e0 = events[ids["0"]]
    assert [k for k, _, _ in e0] == [
        ev.MODEL_MESSAGE,
        ev.TOOL_CALL,
        ev.TOOL_RESULT,
        ev.TOOL_CALL,
        ev.TOOL_RESULT,
        ev.ANSWER,
    ]
    assert e0[1][1]["name"] == "OCR" and e0[1][1]["arguments"] == {"image": "image/image_0.jpg"}
    assert e0[2][1]["call_id"] == e0[1][1]["call_id"] and e0[2][1]["text"] == "(1, 2, 3, 4) 290 SOFTGELS"
    assert e0[3][1]["arguments"] == {"expression": "290 / 2"}
    assert e0[5][1]["text"] == "145"
    export_run(engine, blobs, "gta", summary.run_id, tmp_path / "back")
    assert json.loads((tmp_path / "back" / "gta_bench.json").read_text()) == preds


def test_malformed_dataset_names_record_and_field_and_writes_nothing(engine, blobs, tmp_path: Path, counts) -> None:
    data = write_gta(tmp_path / "src", n=3)
    before = counts()
    data["2"]["dialogs"][1]["tool_calls"][0]["function"]["name"] = 7
    (tmp_path / "src" / "dataset.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FormatError) as err:
        import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert err.value.record == "2" and err.value.field == "dialogs[1].tool_calls[0].function.name"
    assert "dataset.json" in str(err.value)
    assert counts() == before


def test_unknown_ids_are_ignored_and_listed_but_a_file_of_only_unknown_ids_is_refused(
    engine, blobs, tmp_path: Path, counts
) -> None:
    data = write_gta(tmp_path / "src", n=2)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    preds = gta_step_predictions(data)
    preds["99"] = preds["0"]
    (tmp_path / "p.json").write_text(json.dumps(preds), encoding="utf-8")
    summary = import_run(engine, blobs, "gta", tmp_path / "p.json", "gta")
    assert summary.trajectories == 2
    assert any("ignored" in n and "'99'" in n for n in summary.notes)
    (tmp_path / "q.json").write_text(json.dumps({"99": preds["0"]}), encoding="utf-8")
    before = counts()
    with pytest.raises(FormatError, match="no task with source id '99'"):
        import_run(engine, blobs, "gta", tmp_path / "q.json", "gta")
    assert counts() == before


def _make_run(engine, mode: str, events_for) -> int:
    from store import session_scope
    from store.models import Event

    with session_scope(engine, "harness") as s:
        tasks = s.exec(select(Task).order_by(col(Task.id))).all()
        run = Run(name=f"native {mode}", benchmark_id=tasks[0].benchmark_id, mode=mode, status="done")
        s.add(run)
        s.flush()
        for t in tasks:
            evs = events_for(t)
            answer = next((p["text"] for k, p in evs if k == ev.ANSWER), None)
            traj = Trajectory(run_id=must(run.id), task_id=must(t.id), status="done", final_answer=answer)
            s.add(traj)
            s.flush()
            s.add_all(
                [Event(trajectory_id=must(traj.id), ordinal=i, kind=k, payload=p) for i, (k, p) in enumerate(evs)]
            )
        return run.id


def _semantic(engine, run_id: int) -> list:
    keep = {
        ev.TOOL_CALL: ("name", "arguments"),
        ev.TOOL_RESULT: ("name", "text"),
        ev.ANSWER: ("text",),
        ev.STEP_PREDICTION: ("gold_index", "prediction"),
    }
    return [
        [(k, {f: p.get(f) for f in keep[k]}) for k, p, _ in evs if k in keep]
        for _, evs in sorted(run_events(engine, run_id).items())
    ]


def test_chainmark_e2e_run_exports_and_reads_back_equal(engine, blobs, tmp_path: Path) -> None:
    write_gta(tmp_path / "src", n=3)
    import_dataset(engine, blobs, "gta", tmp_path / "src")

    def events_for(t):
        return [
            (ev.MODEL_MESSAGE, {"content": "Thought: read it", "tool_calls": []}),
            (ev.TOOL_CALL, ev.tool_call("OCR", {"image": "image/x.jpg"}, "a1")),
            (ev.TOOL_RESULT, ev.tool_result("OCR", f"text of {t.source_id}", call_id="a1")),
            (ev.TOOL_CALL, ev.tool_call("Calculator", {"expression": "1+1"}, "a2")),
            (ev.TOOL_RESULT, ev.tool_result("Calculator", "2", call_id="a2")),
            (ev.ANSWER, ev.answer(f"answer {t.source_id}")),
        ]

    run_id = _make_run(engine, "react", events_for)
    export_run(engine, blobs, "gta", run_id, tmp_path / "e2e.json")
    exported = json.loads((tmp_path / "e2e.json").read_text())
    assert exported["0"]["gold"] == [json.loads((tmp_path / "src/dataset.json").read_text())["0"]["dialogs"][1:]]
    assert exported["0"]["prediction"][0][1] == {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {"image": "image/x.jpg"}}}],
    }
    back = import_run(engine, blobs, "gta", tmp_path / "e2e.json", "gta")
    assert _semantic(engine, back.run_id) == _semantic(engine, run_id)


def test_chainmark_step_run_exports_and_reads_back_equal(engine, blobs, tmp_path: Path) -> None:
    write_gta(tmp_path / "src", n=3)
    import_dataset(engine, blobs, "gta", tmp_path / "src")

    def events_for(t):
        return [
            (
                ev.STEP_PREDICTION,
                {
                    "gold_index": 0,
                    "prediction": {
                        "role": "assistant",
                        "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {"image": "a"}}}],
                    },
                },
            ),
            (ev.STEP_PREDICTION, {"gold_index": 1, "prediction": {"role": "assistant", "content": "x"}}),
            (
                ev.STEP_PREDICTION,
                {"gold_index": 2, "prediction": {"role": "assistant", "content": f"final {t.source_id}"}},
            ),
        ]

    run_id = _make_run(engine, "step", events_for)
    export_run(engine, blobs, "gta", run_id, tmp_path / "step.json")
    exported = json.loads((tmp_path / "step.json").read_text())
    assert len(exported["1"]["gold"]) == 3 and exported["1"]["gold"][0]["tool_calls"][0]["function"]["name"] == "OCR"
    back = import_run(engine, blobs, "gta", tmp_path / "step.json", "gta")
    assert _semantic(engine, back.run_id) == _semantic(engine, run_id)
    with Session(engine) as s:
        assert must(s.get(Run, back.run_id)).mode == "step"


def test_unpaired_surrogate_is_a_clear_error_and_imports_nothing(engine, blobs, tmp_path: Path, counts) -> None:
    """JSON may spell a lone UTF-16 surrogate ("\\ud800"); UTF-8 cannot hold it, so the import names
    the record and field and stores nothing."""
    data = write_gta(tmp_path / "src", n=3)
    data["2"]["dialogs"][0]["content"] = "How many SURROGATE cups?"
    text = json.dumps(data).replace("SURROGATE", "\\ud800")
    (tmp_path / "src" / "dataset.json").write_text(text, encoding="utf-8")
    before = counts()
    with pytest.raises(FormatError) as err:
        import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert "record 2" in str(err.value) and "dialogs[0].content" in str(err.value)
    assert "unpaired UTF-16 surrogate" in str(err.value)
    assert counts() == before


# Answers the reference scores although an author could not write them (issue 33): each value below was
# established by running OpenCompass's ``GTABenchEvaluator.iscorrect`` on the same reference and answer.
QUIRKY_ANSWERS: dict[str, tuple[dict[str, Any], dict[str, bool]]] = {
    "0": ({"whitelist": [["42"]], "blacklist": [[]]}, {"42": False, "--": False}),
    "1": ({"whitelist": [["42"]], "blacklist": [[""]]}, {"The answer is 42.": False, "": False}),
    "2": ({"whitelist": [[]], "blacklist": None}, {"x": True, "-- !": False}),
    "4": ({"whitelist": [], "blacklist": [[]]}, {"--": True, "a": False}),
}


def test_answers_the_reference_scores_import_as_it_reads_them_with_a_note(engine, blobs, tmp_path: Path) -> None:
    from evaluation.scoring.matchers import gta_iscorrect

    data = write_gta(tmp_path / "src", n=5)
    for key, (gt, _) in QUIRKY_ANSWERS.items():
        data[key]["gt_answer"] = gt
    data["3"]["gt_answer"] = []
    (tmp_path / "src" / "dataset.json").write_text(json.dumps(data), encoding="utf-8")
    summary = import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert summary.created == 5
    noted = [n.split(": ", 2)[1] for n in summary.notes]
    assert noted == ["record 0", "record 1", "record 2", "record 3", "record 4", "record 4"]
    assert "fails any answer with a word in it" in summary.notes[0] and "denominator" in summary.notes[3]
    with Session(engine) as s:
        specs = {t.source_id: t.answer_spec for t in s.exec(select(Task)).all()}
    assert specs["3"]["references"] == [] and specs["3"]["as_read"]
    for key, (gt, outcomes) in QUIRKY_ANSWERS.items():
        assert specs[key]["groups"] == gt["whitelist"] and specs[key]["as_read"]
        ref = {"whitelist": specs[key]["groups"], "blacklist": specs[key]["blacklist"]}
        assert {answer: gta_iscorrect(answer, ref) for answer in outcomes} == outcomes
    out = tmp_path / "out"
    export_dataset(engine, blobs, "gta", "gta", out)  # what the reference read goes back out unchanged
    assert {k: r["gt_answer"] for k, r in json.loads((out / "dataset.json").read_text()).items()} == {
        k: r["gt_answer"] for k, r in data.items()
    }


def test_an_author_still_cannot_write_an_empty_alias() -> None:
    from annotation.answers import AnswerSpecError, validate_answer_spec

    with pytest.raises(AnswerSpecError, match="non-empty"):
        validate_answer_spec({"kind": "whitelist", "groups": [["42"]], "blacklist": [[]]})
    with pytest.raises(AnswerSpecError, match="non-empty"):
        validate_answer_spec({"kind": "references", "references": []})
