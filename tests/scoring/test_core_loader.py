"""The Core loader reads exactly what the ORM loader read: same items, same scores, byte for byte."""

from __future__ import annotations

import json

import pytest
from sqlmodel import select

from annotation import tasks as authoring
from evaluation.scoring import runner
from evaluation.scoring.loader import load_run
from evaluation.scoring.runner import score_run
from store import read_only, session_scope
from store.models import Asset, Event, EventAsset, OrderingConstraint, Trajectory
from tests.scoring import orm_loader_reference
from tests.scoring.builders import answer, call, png, res, stored_png, stored_run, stored_trajectory
from tests.support.scoring_runs import write_run
from tests.support.must import must


def both(engine, run_id):
    with session_scope(read_only(engine)) as s:
        return load_run(s, run_id), orm_loader_reference.load_run(s, run_id)


@pytest.mark.parametrize("profile", ["gta", "agentic-mme", "vtc"])
def test_generated_runs_load_and_score_identically(engine, monkeypatch, profile):
    run_id = write_run(engine, profile, 300)
    new, old = both(engine, run_id)
    assert len(new.items) == 300 and vars(new) == vars(old)  # two LoadedRun classes: compare fields
    core = json.dumps(
        score_run(engine, run_id, embedder="hashing", write=False).public(per_item=True), sort_keys=True, default=str
    )
    monkeypatch.setattr(runner, "load_run", orm_loader_reference.load_run)
    orm = json.dumps(
        score_run(engine, run_id, embedder="hashing", write=False).public(per_item=True), sort_keys=True, default=str
    )
    assert core == orm


def test_assets_steps_ordering_and_native_records_load_identically(engine, blobs):
    """Task images, event assets (linked and only named in payloads), reference steps, ordering
    constraints, a native record's blobs and JSON nulls all come through the same."""
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "mme-mini", "agentic-mme", endpoint="ep")
        t = authoring.create_task(s, "mme-mini", "Which colour?", answer_spec={"kind": "contains", "value": "red"})
        authoring.attach_asset(s, blobs, must(t.id), png((200, 0, 0)), original_path="image/a.png")
        authoring.add_step(s, must(t.id), tool_name="crop", tool_args={"image_index": 0}, result_text="ok")
        authoring.add_step(s, must(t.id), final_answer="red")
        s.add(OrderingConstraint(task_id=must(t.id), key="O", sequence=["V1"], max_gap=None))
        linked, named = stored_png(s, blobs, (0, 200, 0)), stored_png(s, blobs, (0, 0, 200))
        traj = stored_trajectory(
            s,
            run,
            must(t.id),
            [call("crop", {"image_index": 0}, "1"), res("crop", "1", "done", asset_ids=[named]), answer("red")],
            final_answer="red",
        )
        result_event = s.exec(select(Event).where(Event.trajectory_id == traj.id, Event.ordinal == 1)).one()
        s.add(EventAsset(event_id=must(result_event.id), asset_id=linked, role="output"))
        sha = must(s.get(Asset, linked)).sha256
        must(s.get(Trajectory, traj.id)).native = {"blobs": {"orig.png": sha}, "score": None}
        run_id = run.id
    new, old = both(engine, run_id)
    assert vars(new) == vars(old)
    item = new.items[0]
    assert item.native_assets == {"orig.png": linked} and set(item.asset_sha) >= {linked, named}
    assert (
        item.events[1]["payload"]["asset_ids"] == [named, linked] and item.reference_steps[1]["final_answer"] == "red"
    )
    assert item.ordering == [{"key": "O", "sequence": ["V1"], "max_gap": None}] and item.task_assets[0]["role"]


def test_checkpoint_results_are_upserted_once_per_key(engine):
    """Written with Core executemany: a re-score updates the same rows, another mode adds its own."""
    from store.models import CheckpointResult

    run_id = write_run(engine, "agentic-mme", 40)
    first = score_run(engine, run_id, embedder="hashing")
    with session_scope(engine) as s:
        rows = s.exec(select(CheckpointResult)).all()
        assert len(rows) == first.checkpoint_results_written > 0
        assert {r.scoring_mode for r in rows} == {"faithful"} and all(isinstance(r.detail, dict) for r in rows)
        before = {(r.trajectory_id, r.checkpoint_id, r.method): (r.id, r.passed) for r in rows}
        must(s.get(CheckpointResult, rows[0].id)).passed = not rows[0].passed  # a stale value the re-score must fix
    again = score_run(engine, run_id, embedder="hashing")
    fixed = score_run(engine, run_id, mode="fixed", embedder="hashing")
    with session_scope(engine) as s:
        rows = s.exec(select(CheckpointResult)).all()
        faithful = {
            (r.trajectory_id, r.checkpoint_id, r.method): (r.id, r.passed) for r in rows if r.scoring_mode == "faithful"
        }
        assert faithful == before and again.checkpoint_results_written == len(before)
        assert len(rows) == len(before) + fixed.checkpoint_results_written


def test_event_payload_texts_decode_as_the_orm_loader_reads_them(engine):
    """The events' payloads are decoded inline (not through the JSON column's processor): JSON null,
    empty objects and arrays, NaN and integers past 64 bits come through as the ORM loader reads them."""
    import sqlalchemy as sa

    run_id = write_run(engine, "agentic-mme", 2)
    texts = ["null", "{}", "[]", '{"x": NaN, "big": 123456789012345678901234567890}', '{"asset_ids": []}']
    with engine.begin() as c:
        ids = [r[0] for r in c.execute(sa.text("SELECT id FROM event ORDER BY id"))]
        for eid, text in zip(ids, texts):
            c.execute(sa.text("UPDATE event SET payload = :p WHERE id = :i"), {"p": text, "i": eid})
    new, old = both(engine, run_id)
    assert vars(new) == vars(old)
    payloads = [e["payload"] for it in new.items for e in it.events][: len(texts)]
    assert payloads[:3] == [{}, {}, {}] and payloads[3]["big"] == 123456789012345678901234567890


def test_a_few_trajectories_without_events_load_as_the_orm_loader_reads_them(engine):
    """``only`` (up to _FEW trajectories, read without streaming) with no event, no checkpoint row and no
    ordering constraint among them: every per-run query comes back empty, and the items still load."""
    import sqlalchemy as sa

    run_id = write_run(engine, "agentic-mme", 3)
    with engine.begin() as c:
        c.execute(sa.text("DELETE FROM event"))
        c.execute(sa.text("DELETE FROM orderingconstraint"))
        c.execute(sa.text("DELETE FROM checkpoint"))
        first = c.execute(sa.text("SELECT min(id) FROM trajectory WHERE run_id = :r"), {"r": run_id}).scalar()
    with session_scope(read_only(engine)) as s:
        few = load_run(s, run_id, only=[first])
        whole, old = both(engine, run_id)
    assert vars(whole) == vars(old)
    assert len(few.items) == 1 and vars(few.items[0]) == vars(whole.items[0])
    assert few.items[0].events == [] and few.items[0].checkpoints == []
