from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, select, col

from annotation.formats import FormatError
from annotation.formats.api import export_dataset, export_run, import_dataset, import_run
from store import events as ev
from store import session_scope
from store.models import Document, ReferenceStep, Task, TaskAsset, Trajectory
from tests.formats.conftest import run_events
from tests.formats.fixtures import png, read_tsv_cells, write_atp, write_isg, write_vtc
from tests.support.must import must


def _jsonl(path: Path) -> list:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def _bump_revisions(engine) -> None:
    with Session(engine) as s:
        for t in s.exec(select(Task)).all():
            t.revision += 1
            s.add(t)
        s.commit()


# ------------------------------------------------------------------ ISG


def test_isg_round_trip(engine, blobs, tmp_path: Path) -> None:
    lines = write_isg(tmp_path / "src")
    summary = import_dataset(engine, blobs, "isg", tmp_path / "src")
    assert summary.created == 3
    with Session(engine) as s:
        t = s.exec(select(Task).where(Task.source_id == "0001")).one()
        assert (t.subcategory, t.category) == ("HowTo", "Image-Text Complementation")
        assert t.answer_spec["kind"] == "interleaved" and len(t.answer_spec["golden"]) == 3
        roles = [
            (l.role, l.original_path)
            for l in s.exec(
                select(TaskAsset).where(TaskAsset.task_id == t.id).order_by(col(TaskAsset.role), col(TaskAsset.ordinal))
            ).all()
        ]
        assert roles == [
            ("golden", "images/0001_g1.png"),
            ("golden", "images/0001_g2.png"),
            ("query_image", "images/0001_q1.png"),
        ]
    export_dataset(engine, blobs, "isg", "isg", tmp_path / "out")
    assert _jsonl(tmp_path / "out" / "ISG-Bench.jsonl") == lines
    assert (tmp_path / "out/images/0002_g2.png").read_bytes() == (tmp_path / "src/images/0002_g2.png").read_bytes()
    _bump_revisions(engine)
    export_dataset(engine, blobs, "isg", "isg", tmp_path / "rebuilt")
    assert _jsonl(tmp_path / "rebuilt" / "ISG-Bench.jsonl") == lines


def test_isg_prediction_lines_import_as_run(engine, blobs, tmp_path: Path) -> None:
    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    preds = []
    for i, line in enumerate(lines):
        out = dict(line)
        out["output"] = (
            None
            if i == 2
            else [{"type": "text", "content": f"It goes on {i}."}, {"type": "image", "content": f"gen/{i}.png"}]
        )
        preds.append(out)
        if i != 2:
            (tmp_path / "pred" / "gen").mkdir(parents=True, exist_ok=True)
            (tmp_path / "pred" / "gen" / f"{i}.png").write_bytes(png(900 + i))
    (tmp_path / "pred" / "out.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    summary = import_run(engine, blobs, "isg", tmp_path / "pred" / "out.jsonl", "isg")
    assert summary.trajectories == 3
    with Session(engine) as s:
        trajs = {must(s.get(Task, t.task_id)).source_id: t for t in s.exec(select(Trajectory)).all()}
        assert trajs["0002"].status == "failed" and trajs["0000"].final_answer == "It goes on 0."
    export_run(engine, blobs, "isg", summary.run_id, tmp_path / "again.jsonl")
    assert _jsonl(tmp_path / "again.jsonl") == preds


def test_isg_duplicate_and_unknown_ids_warn_that_faithful_scores_differ(engine, blobs, tmp_path: Path) -> None:
    """ISG-eval.py judges every prediction line and counts unknown ids under their own Category; chainmark
    keeps one prediction per task, so the import says so (never "as the reference does") and ``score``
    repeats it beside the numbers."""
    from evaluation.scoring.runner import score_run

    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    preds = [{**line, "output": None} for line in lines]
    preds.append({**lines[0], "output": None})  # a second line for task 0000
    preds.append({**lines[1], "id": "9999", "output": None})  # no such task
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    summary = import_run(engine, blobs, "isg", tmp_path / "out.jsonl", "isg")
    assert summary.trajectories == 3
    text = " ".join(summary.warnings)
    assert "line 4: a second prediction for '0000'" in text and "ISG-eval.py judges every line" in text
    assert "line 5: no task with id '9999'" in text and "own Category" in text
    assert not any("as the reference does" in n or "reference keeps the last" in n for n in summary.notes)
    notes = score_run(engine, summary.run_id, embedder="hashing", write=False).notes
    assert sum(n.startswith("import: ") and "faithful scores of this file will differ" in n for n in notes) == 2


def test_isg_missing_image_is_a_clear_error(engine, blobs, tmp_path: Path, counts) -> None:
    write_isg(tmp_path / "src")
    (tmp_path / "src/images/0001_g2.png").unlink()
    before = counts()
    with pytest.raises(FormatError) as err:
        import_dataset(engine, blobs, "isg", tmp_path / "src")
    assert err.value.field == "Golden[2].content" and "line 2" in err.value.record
    assert counts() == before


# ------------------------------------------------------------------ VTC


def test_vtc_joins_by_id_and_exports_cell_equal(engine, blobs, tmp_path: Path) -> None:
    write_vtc(tmp_path / "src")
    summary = import_dataset(engine, blobs, "vtc", tmp_path / "src")
    assert summary.created == 5
    assert any("only in VTC-Bench.tsv" in n for n in summary.notes)
    with Session(engine) as s:
        tasks = {t.source_id: t for t in s.exec(select(Task)).all()}
        assert tasks["counting_1"].answer_spec == {
            "kind": "mcq",
            "options": {"A": "6", "B": "5", "C": "3", "D": "4"},
            "letter": "B",
        }
        assert tasks["math_1"].answer_spec["letter"] == "A"  # answer given as the option text
        assert tasks["ocr_1"].answer_spec == {"kind": "contains", "value": "光陽機車"}
        assert tasks["perceptual_Restoration_1"].answer_spec["kind"] == "exact"
        steps = s.exec(
            select(ReferenceStep)
            .where(ReferenceStep.task_id == tasks["counting_1"].id)
            .order_by(col(ReferenceStep.ordinal))
        ).all()
        assert [st.tool_name for st in steps] == ["Convert Color", "Binarize", "Draw Contours"]  # curly quotes repaired
        math_steps = s.exec(
            select(ReferenceStep)
            .where(ReferenceStep.task_id == tasks["math_1"].id)
            .order_by(col(ReferenceStep.ordinal))
        ).all()
        assert (math_steps[0].tool_name, math_steps[0].meta) == ("Crop", {"source_name": "Zoom in"})
        assert s.exec(select(ReferenceStep).where(ReferenceStep.task_id == tasks["spatial_1"].id)).all() == []
    for out, bump in (("out", False), ("rebuilt", True)):
        if bump:
            _bump_revisions(engine)
        export_dataset(engine, blobs, "vtc", "vtc", tmp_path / out)
        for f in ("VTC-Bench.tsv", "VTC-Bench_GTToolChain.tsv"):
            assert read_tsv_cells(tmp_path / out / f) == read_tsv_cells(tmp_path / "src" / f), (out, f)
    assert (tmp_path / "out/images/math/math_1.jpg").read_bytes() == (
        tmp_path / "src/images/math/math_1.jpg"
    ).read_bytes()


def test_vtc_bad_rows(engine, blobs, tmp_path: Path, counts) -> None:
    write_vtc(tmp_path / "src")
    gt = tmp_path / "src" / "VTC-Bench_GTToolChain.tsv"
    good = gt.read_text(encoding="utf-8")
    before = counts()
    gt.write_text(good.replace("\tB\t6\t", "\tB\t6\textra\t", 1), encoding="utf-8")
    with pytest.raises(FormatError, match=r"row 3: has 12 cells; the header has 11"):
        import_dataset(engine, blobs, "vtc", tmp_path / "src")
    gt.write_text(good.replace('""Denoise"", ""Sharpen""', '""Denoise"", Sharpen'), encoding="utf-8")
    with pytest.raises(FormatError) as err:
        import_dataset(engine, blobs, "vtc", tmp_path / "src")
    assert err.value.field == "model_tools_gt" and "perceptual_Restoration_1" in err.value.record
    assert counts() == before


def test_vtc_results_import_and_export(engine, blobs, tmp_path: Path) -> None:
    write_vtc(tmp_path / "src")
    import_dataset(engine, blobs, "vtc", tmp_path / "src")
    res = tmp_path / "res"
    res.mkdir()
    line = {
        "status": "success",
        "row_index": 0,
        "item_index": 2,
        "item_id": "counting_1",
        "category": "counting",
        "image_path": "/abs/counting_1.jpg",
        "image_size": [20, 20],
        "question": "How many?",
        "ground_truth": "B",
        "agent_answer": "B",
        "full_response": "<think>x</think><answer>B</answer>",
        "options": {"A": "6", "B": "5", "C": "3", "D": "4", "E": ""},
        "conversation": [{"role": "user", "content": "How many?"}, {"role": "assistant", "content": "B"}],
        "timestamp": "2026-01-01",
    }
    (res / "results_1.jsonl").write_text(json.dumps(line) + "\n")
    rl = {
        "timestamp": "t",
        "response_list": [
            [
                {
                    "role": "assistant",
                    "content": "",
                    "function_call": {
                        "name": "opencv_threshold",
                        "arguments": '{"image": "/a.jpg", "param": {"mode": "otsu"}}',
                    },
                },
                {"role": "function", "name": "opencv_threshold", "content": "done\n\nEdited Image Path: /b.png"},
                {"role": "assistant", "content": "<answer>B</answer>", "reasoning_content": "count"},
            ]
        ],
    }
    (res / "response_list_counting_1.json").write_text(json.dumps(rl))
    summary = import_run(engine, blobs, "vtc", res, "vtc")
    events = next(iter(run_events(engine, summary.run_id).values()))
    assert [k for k, _, _ in events] == [ev.TOOL_CALL, ev.TOOL_RESULT, ev.MODEL_MESSAGE, ev.ANSWER]
    assert events[0][1]["arguments"] == {"image": "/a.jpg", "param": {"mode": "otsu"}}
    assert events[3][1]["text"] == "B"
    export_run(engine, blobs, "vtc", summary.run_id, tmp_path / "back")
    assert _jsonl(tmp_path / "back" / f"results_run{summary.run_id}.jsonl") == [line]
    assert json.loads((tmp_path / "back" / "response_list_counting_1.json").read_text()) == rl


# ------------------------------------------------------------------ ATP


def test_atp_documents_images_and_gt_steps(engine, blobs, tmp_path: Path) -> None:
    lines = write_atp(tmp_path / "src")
    summary = import_dataset(engine, blobs, "atp", tmp_path / "src")
    assert (summary.created, summary.documents, summary.steps) == (3, 6, 12)
    with Session(engine) as s:
        t = s.exec(select(Task).where(Task.source_id == "trace-0")).one()
        steps = s.exec(
            select(ReferenceStep).where(ReferenceStep.task_id == t.id).order_by(col(ReferenceStep.ordinal))
        ).all()
        assert [(st.tool_name, st.tool_args) for st in steps[:3]] == [
            ("Reference", {"img_index": 1}),
            ("Edit", {"img_index": 0, "prompt": "circle the two bolts"}),
            ("Search", {"query": "model X 0"}),
        ]
        assert steps[3].is_final and steps[3].final_answer == lines[0]["gt"]
        assert [b["type"] for b in t.answer_spec["golden"]] == ["text", "image", "text", "image", "text", "image"]
        docs = s.exec(select(Document).where(Document.task_id == t.id).order_by(col(Document.ordinal))).all()
        assert [d.text for d in docs] == lines[0]["doc"]
        t1 = s.exec(select(Task).where(Task.source_id == "trace-1")).one()
        links = s.exec(
            select(TaskAsset)
            .where(TaskAsset.task_id == t1.id, TaskAsset.role == "document_image")
            .order_by(col(TaskAsset.ordinal))
        ).all()
        doc_ids = [
            d.id for d in s.exec(select(Document).where(Document.task_id == t1.id).order_by(col(Document.ordinal)))
        ]
        assert [l.document_id for l in links] == doc_ids
        assert t.meta["vqa"] is True and t1.meta["vqa"] is False
    export_dataset(engine, blobs, "atp", "atp", tmp_path / "out")
    assert _jsonl(tmp_path / "out" / "data.jsonl") == lines
    _bump_revisions(engine)
    export_dataset(engine, blobs, "atp", "atp", tmp_path / "rebuilt")
    assert _jsonl(tmp_path / "rebuilt" / "data.jsonl") == lines


def test_atp_outputs_become_plan_calls(engine, blobs, tmp_path: Path) -> None:
    write_atp(tmp_path / "src", n=2)
    import_dataset(engine, blobs, "atp", tmp_path / "src")
    outputs = [
        {
            "trace_id": "trace-0",
            "model": "m",
            "output": 'Text.<tool>{"tool_name": "Diffusion", '
            '"description": "a shelf", "params": {"prompt": "shelf"},}</tool>More.<tool>{broken</tool>',
        },
        {"trace_id": "trace-1", "model": "m", "output": "No images needed."},
    ]
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))
    summary = import_run(engine, blobs, "atp", tmp_path / "outputs.jsonl", "atp")
    assert summary.mode == "plan"
    with Session(engine) as s:
        ids = {t.source_id: t.id for t in s.exec(select(Task)).all()}
    events = run_events(engine, summary.run_id)[ids["trace-0"]]
    plan = [(p, failed) for k, p, failed in events if k == ev.PLAN_CALL]
    assert plan[0][0]["tool_name"] == "Diffusion" and plan[0][0]["params"] == {"prompt": "shelf"} and not plan[0][1]
    assert plan[0][0]["position"] == 5
    assert plan[1][1] is True and "not JSON" in plan[1][0]["error"]
    export_run(engine, blobs, "atp", summary.run_id, tmp_path / "back")
    assert _jsonl(tmp_path / "back" / "outputs.jsonl") == outputs


def test_atp_invalid_gt_tag_is_refused(engine, blobs, tmp_path: Path, counts) -> None:
    lines = write_atp(tmp_path / "src", n=2)
    lines[1]["gt"] = 'Look: <tool>{"description": "no name"}</tool>'
    (tmp_path / "src" / "data.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    before = counts()
    with pytest.raises(FormatError) as err:
        import_dataset(engine, blobs, "atp", tmp_path / "src")
    assert err.value.field == "gt" and "line 2" in err.value.record and "tool_name" in str(err.value)
    assert counts() == before


@pytest.mark.parametrize(
    "fmt,spec",
    [
        ("agentic-mme", {"kind": "numeric", "value": "12", "tolerance": 0.5}),
        ("isg", {"kind": "interleaved", "golden": [{"type": "text", "content": "a story"}]}),
        ("vtc", {"kind": "mcq", "options": {"A": "3", "B": "4"}, "letter": "B"}),
        ("atp", {"kind": "none"}),
    ],
)
def test_authored_tasks_export_and_import_back(engine, blobs, tmp_path: Path, fmt: str, spec: dict) -> None:
    """A task made in chainmark (no source record) exports in each format and that export imports cleanly."""
    from annotation import tasks as authoring

    with session_scope(engine, "ann") as s:
        b = authoring.ensure_benchmark(s, "mine", fmt)
        t = authoring.create_task(s, b, "How many bolts?", answer_spec=spec, category="counting", level="2")
        authoring.attach_asset(s, blobs, must(t.id), png(5))
        authoring.add_step(s, must(t.id), tool_name="Crop", tool_args={"x": 1})
        if fmt == "agentic-mme":
            authoring.add_checkpoint(s, must(t.id), "cp1", axis="V", tools=["crop"], description="crop it")
            authoring.add_checkpoint(s, must(t.id), "cp2", axis="S", tools=["google_search"])
            authoring.add_ordering_constraint(s, must(t.id), ["cp1", "cp2"], max_gap=1)
        if fmt == "atp":
            authoring.add_document(s, must(t.id), "The manual text.")
    export_dataset(engine, blobs, fmt, "mine", tmp_path / "out")
    summary = import_dataset(engine, blobs, fmt, tmp_path / "out", benchmark="again")
    assert summary.created == 1
    with Session(engine) as s:
        again = s.exec(select(Task).where(Task.source_id == "cm-00001").order_by(col(Task.id).desc())).first()
        assert must(again).query == "How many bolts?"
        assert must(again).answer_spec["kind"] == spec["kind"]
        if fmt == "agentic-mme":
            assert summary.checkpoints == 2 and must(again).answer_spec["value"] == "12"
        if fmt == "vtc":
            assert must(again).answer_spec == spec
        if fmt == "atp":
            assert summary.documents == 1
