from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, select, col

from annotation.formats import FormatError
from annotation.formats.api import export_dataset, export_run, import_dataset, import_run
from store import events as ev
from store import session_scope
from store.blobs import put_asset
from store.models import Checkpoint, EventAsset, OrderingConstraint, Run, Task, TaskAsset, Trajectory, Event
from tests.formats.conftest import run_events
from tests.formats.fixtures import png, write_mme, write_mme_run
from tests.support.must import must


def test_import_maps_checkpoints_orderings_efficiency_and_images(engine, blobs, tmp_path: Path) -> None:
    src = write_mme(tmp_path / "src", n=3)
    summary = import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    assert (summary.created, summary.checkpoints) == (3, 9)
    with Session(engine) as s:
        t = s.exec(select(Task).where(Task.source_id == "0001")).one()
        assert t.answer_spec == {"kind": "exact", "value": "101", "tolerance": 0.5}
        assert (t.level, t.domain, t.meta["task_id"]) == ("2", "Science", "L2_Test_Domain_Item_0001")
        assert (t.reference_tool_calls, t.max_tool_calls, t.penalty_per_extra_call) == (2, 6, 0.1)
        cps = s.exec(select(Checkpoint).where(Checkpoint.task_id == t.id).order_by(col(Checkpoint.ordinal))).all()
        assert [(c.key, c.axis) for c in cps] == [("V1_crop", "V"), ("S1_search", "S"), ("V_final_answer", "V")]
        assert cps[0].code_check == {"tool": "python_image_processing", "verifier": "verify_crop_ast"}
        assert cps[0].visual_check["expected_answer"] == "Yes"
        assert cps[2].answer_check == {"match_type": "contains", "target": "101"}
        oc = s.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == t.id)).one()
        assert (oc.key, oc.sequence, oc.max_gap) == ("O1", ["V1_crop", "S1_search"], 2)
        links = s.exec(select(TaskAsset).where(TaskAsset.task_id == t.id).order_by(col(TaskAsset.ordinal))).all()
        assert [l.original_path for l in links] == ["images/image_0001_1.png", "images/image_0001_2.jpg"]
    out = tmp_path / "out"
    export_dataset(engine, blobs, "agentic-mme", "agentic-mme", out)
    for ident, rec in src.items():
        assert json.loads((out / f"json/{ident}.json").read_text()) == rec
    for p in (tmp_path / "src" / "images").iterdir():
        assert (out / "images" / p.name).read_bytes() == p.read_bytes()


def test_rebuilt_from_rows_equals_source(engine, blobs, tmp_path: Path) -> None:
    src = write_mme(tmp_path / "src", n=3)
    import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    with Session(engine) as s:
        for t in s.exec(select(Task)).all():
            t.revision += 1
            s.add(t)
        s.commit()
    export_dataset(engine, blobs, "agentic-mme", "agentic-mme", tmp_path / "out")
    for ident, rec in src.items():
        assert json.loads((tmp_path / "out" / f"json/{ident}.json").read_text()) == rec


def test_missing_image_names_the_field(engine, blobs, tmp_path: Path, counts) -> None:
    write_mme(tmp_path / "src", n=3)
    (tmp_path / "src" / "images" / "image_0002.png").unlink()
    before = counts()
    with pytest.raises(FormatError) as err:
        import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    assert (err.value.record, err.value.field) == ("0002", "input.image")
    assert counts() == before


def test_ordering_on_unknown_checkpoint_imports_as_the_reference_reads_it(engine, blobs, tmp_path: Path) -> None:
    """The reference scores an ordering that names a checkpoint the task lacks (it never passes): kept, noted."""
    src = write_mme(tmp_path / "src", n=2)
    src["0000"]["process_evaluation"]["ordering_constraints"][0]["sequence"] = ["V1_crop", "nope"]
    (tmp_path / "src" / "json" / "0000.json").write_text(json.dumps(src["0000"]))
    summary = import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    assert summary.created == 2
    assert len(summary.notes) == 1 and "0000.json: ordering" in summary.notes[0] and "nope" in summary.notes[0]
    with Session(engine) as s:
        task = s.exec(select(Task).where(Task.source_id == "0000")).one()
        orderings = s.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == task.id)).all()
    assert [o.sequence for o in orderings] == [["V1_crop", "nope"]]
    out = tmp_path / "out"
    export_dataset(engine, blobs, "agentic-mme", "agentic-mme", out)
    again = json.loads((out / "json" / "0000.json").read_text())
    assert again["process_evaluation"]["ordering_constraints"][0]["sequence"] == ["V1_crop", "nope"]


def test_run_folder_imports_every_call_and_answer_and_exports_exactly(engine, blobs, tmp_path: Path) -> None:
    write_mme(tmp_path / "src", n=2)
    import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    run_dir = tmp_path / "runs" / "atomic" / "m"
    write_mme_run(run_dir, "0000")
    summary = import_run(engine, blobs, "agentic-mme", run_dir, "agentic-mme", name="elsewhere")
    assert (summary.mode, summary.trajectories) == ("atomic", 1)
    events = next(iter(run_events(engine, summary.run_id).values()))
    assert [k for k, _, _ in events] == [ev.TOOL_CALL, ev.TOOL_RESULT, ev.TOOL_CALL, ev.TOOL_RESULT, ev.ANSWER]
    assert events[0][1]["arguments"] == {"image_index": 0, "bbox_2d": [100, 100, 500, 500], "zoom_scale": 2.0}
    assert events[1][1]["data"]["new_image_index"] == 1 and len(events[1][1]["asset_ids"]) == 1
    assert events[2][1]["name"] == "google_search" and events[3][1]["data"]["context"] == "Founded in 1962."
    assert events[4][1]["text"] == "The answer is <answer>100</answer>"
    with Session(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == summary.run_id)).one()
        assert traj.usage["total_tokens"] == 1020 and traj.status == "done"
        link = s.exec(select(EventAsset)).one()
        from store.models import Asset

        assert blobs.get(must(s.get(Asset, link.asset_id)).sha256) == png(77)
    out = tmp_path / "again"
    export_run(engine, blobs, "agentic-mme", summary.run_id, out)
    for p in (run_dir / "0000").rglob("*"):
        if p.is_file():
            assert (out / "0000" / p.relative_to(run_dir / "0000")).read_bytes() == p.read_bytes(), p


def test_chainmark_run_exports_as_run_folder_and_reads_back_equal(engine, blobs, tmp_path: Path) -> None:
    write_mme(tmp_path / "src", n=1)
    import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    with session_scope(engine, "harness") as s:
        task = s.exec(select(Task)).one()
        run = Run(name="native", benchmark_id=task.benchmark_id, mode="atomic", status="done")
        s.add(run)
        s.flush()
        traj = Trajectory(
            run_id=must(run.id), task_id=must(task.id), status="done", final_answer="100", usage={"total_tokens": 50}
        )
        s.add(traj)
        s.flush()
        art = put_asset(s, blobs, png(55))
        rows = [
            Event(
                trajectory_id=must(traj.id),
                ordinal=0,
                kind=ev.TOOL_CALL,
                payload=ev.tool_call("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 500]}, "c1"),
            ),
            Event(
                trajectory_id=must(traj.id),
                ordinal=1,
                kind=ev.TOOL_RESULT,
                payload=ev.tool_result(
                    "crop",
                    "cropped",
                    call_id="c1",
                    data={"ok": "true", "op": "crop", "new_image_index": 1},
                    asset_ids=[must(art.id)],
                ),
            ),
            Event(trajectory_id=must(traj.id), ordinal=2, kind=ev.ANSWER, payload=ev.answer("100")),
        ]
        s.add_all(rows)
        s.flush()
        s.add(EventAsset(event_id=must(rows[1].id), asset_id=must(art.id)))
        run_id = run.id
    out = tmp_path / "exported"
    export_run(engine, blobs, "agentic-mme", must(run_id), out)
    assert (out / "0000" / "orig.png").exists() and (out / "0000" / "model_answer.txt").read_text() == "100"
    tool_list = json.loads((out / "0000" / "tool_use_list.json").read_text())
    assert tool_list[0]["tool_name"] == "crop" and tool_list[0]["output"]["new_image_index"] == 1
    back = import_run(engine, blobs, "agentic-mme", out, "agentic-mme")
    events = next(iter(run_events(engine, back.run_id).values()))
    assert [(k, p.get("name")) for k, p, _ in events] == [
        (ev.TOOL_CALL, "crop"),
        (ev.TOOL_RESULT, "crop"),
        (ev.ANSWER, None),
    ]
    assert events[0][1]["arguments"] == {"image_index": 0, "bbox_2d": [0, 0, 500, 500]}
    assert events[1][1]["data"]["op"] == "crop" and events[2][1]["text"] == "100"
    with Session(engine) as s:
        from store.models import Asset

        (aid,) = events[1][1]["asset_ids"]
        assert blobs.get(must(s.get(Asset, aid)).sha256) == png(55)
        meta = json.loads((out / "0000" / "run_meta.json").read_text())
        assert meta["effective_tool_calls"] == 1 and meta["usage"] == {"total_tokens": 50}


def test_run_folder_is_matched_to_the_task_its_run_meta_names_not_its_folder(engine, blobs, tmp_path: Path) -> None:
    """The reference reads ``run_meta.json``'s ``task_file``; a complete run naming none cannot be scored by
    it and is left out, with a note each."""
    write_mme(tmp_path / "src", n=2)
    import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    runs = tmp_path / "runs"
    renamed = write_mme_run(runs, "0001")
    meta = json.loads((renamed / "run_meta.json").read_text())
    (renamed / "run_meta.json").write_text(json.dumps({**meta, "task_file": "/data/amme/json/0000.json"}))
    nameless = write_mme_run(runs, "0000")
    meta = json.loads((nameless / "run_meta.json").read_text())
    del meta["task_file"]
    (nameless / "run_meta.json").write_text(json.dumps(meta))
    summary = import_run(engine, blobs, "agentic-mme", runs, "agentic-mme", name="by-meta")
    assert summary.trajectories == 1
    with Session(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == summary.run_id)).one()
        task = s.get(Task, traj.task_id)
        assert task is not None and task.source_id == "0000"
    notes = " | ".join(summary.notes)
    assert "0001: scored against task 0000" in notes and "0000: run_meta.json names no task_file" in notes
