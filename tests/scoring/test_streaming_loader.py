"""The streamed, sub-select loader reads what the ORM loader (the test oracle) read, on a run shaped to
hit its edge cases: more trajectories than the old 500-id chunks, another run's trajectories
interleaved by id (the other run scored the same tasks), a task edited after the run (restored from the audit trail) and one whose old revision was never recorded, a checkpoint
edited after the run, native-record files shared by several trajectories, event assets linked but not
named, named but not linked, on a non-tool event, and a null payload."""

from __future__ import annotations

import json
from typing import TypeVar

import sqlalchemy as sa
from sqlmodel import select

from annotation import tasks as authoring
from evaluation.scoring import runner
from evaluation.scoring.loader import load_run
from evaluation.scoring.runner import score_run
from store import read_only, session_scope
from store.models import Asset, Event, EventAsset, Run, Task, Trajectory, utcnow
from tests.scoring import orm_loader_reference
from tests.scoring.builders import answer, call, ev, res, stored_png, stored_run, stored_trajectory
from tests.support.scoring_runs import write_run

T = TypeVar("T")


def _row(value: T | None) -> T:
    assert value is not None
    return value


def _scores(engine, run_id: int) -> str:
    return json.dumps(
        score_run(engine, run_id, embedder="hashing", write=False).public(per_item=True), sort_keys=True, default=str
    )


def test_streamed_loader_equals_the_orm_loader_on_edge_cases(engine, blobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    run_id = write_run(engine, "agentic-mme", 620)
    with session_scope(engine, actor="tester") as s:
        run = s.get(Run, run_id)
        assert run is not None
        task_ids = [
            authoring.create_task(
                s, "gen-agentic-mme", f"extra question {k}", answer_spec={"kind": "contains", "value": "a"}
            ).id
            or 0
            for k in range(4)
        ]
        other = stored_run(s, "other", "agentic-mme", endpoint="ep-other")
        linked, named = stored_png(s, blobs, (0, 200, 0)), stored_png(s, blobs, (0, 0, 200))
        shared_sha = _row(s.get(Asset, linked)).sha256
        repeat_ids = []
        for k, tid in enumerate(task_ids):
            t = stored_trajectory(
                s,
                run,
                tid,
                [
                    call("crop", {"image_index": 0}, "1"),
                    res("crop", "1", "done", asset_ids=[named]),
                    {**ev("note", {}), "payload": None},  # a null payload
                    answer(f"a{k}"),
                ],
                final_answer=f"a{k}",
            )
            stored_trajectory(s, other, tid, [answer("other run")])  # ids interleave with this run's
            _row(s.get(Trajectory, t.id)).native = {"blobs": {"orig.png": shared_sha, "gone.png": "0" * 64}, "k": k}
            repeat_ids.append(t.id)
            for ordinal in (1, 3):  # linked to a tool result (completes its payload) and to an answer
                e = s.exec(select(Event).where(Event.trajectory_id == t.id, Event.ordinal == ordinal)).one()
                s.add(EventAsset(event_id=e.id or 0, asset_id=linked, role="output"))
        s.flush()
        first_cp = authoring.add_checkpoint(s, task_ids[0], "V1", axis="V", description="as run")
        authoring.add_checkpoint(s, task_ids[0], "V2", axis="V", description="also as run")
        s.flush()
        revision = _row(s.get(Task, task_ids[0])).revision
        for traj in s.exec(select(Trajectory).where(Trajectory.task_id.in_(task_ids[:2]))).all():  # type: ignore[attr-defined]
            traj.task_revision, traj.started_at = revision if traj.task_id == task_ids[0] else 1, utcnow()
    with session_scope(engine, actor="editor") as s:
        authoring.edit_task(s, task_ids[0], query="edited after the run")  # restorable from the audit trail
        authoring.edit_checkpoint(s, first_cp.id or 0, description="edited later")
        authoring.add_checkpoint(s, task_ids[0], "V3", axis="V", description="added later")
        no_audit = sa.update(Task).where(Task.id == task_ids[1]).values(revision=3)  # type: ignore[arg-type]
        s.connection().execute(no_audit)  # an edit the audit trail never saw

    with session_scope(read_only(engine)) as s:
        new, old = load_run(s, run_id), orm_loader_reference.load_run(s, run_id)
    assert len(new.items) == 624 and vars(new) == vars(old)  # two LoadedRun classes: compare fields
    states = {it.trajectory["edited_after_run"] for it in new.items}
    assert states == {None, "restored", "unrecorded"}
    edited = next(it for it in new.items if it.task["id"] == task_ids[0])
    assert edited.task["query"] == "extra question 0" and edited.trajectory["edited_after_run"] == "restored"
    assert [c["description"] for c in edited.checkpoints] == ["as run", "also as run"]
    repeats = [it for it in new.items if it.trajectory["id"] in repeat_ids]
    assert all(it.native_assets == {"orig.png": linked} and it.asset_sha[linked] == shared_sha for it in repeats)
    assert repeats[0].events[1]["payload"]["asset_ids"] == [named, linked]  # linked id completes the payload
    assert repeats[0].events[2]["payload"] == {} and repeats[0].events[3]["assets"] == [linked]

    streamed = _scores(engine, run_id)
    monkeypatch.setattr(runner, "load_run", orm_loader_reference.load_run)
    assert streamed == _scores(engine, run_id)
