"""How finished trajectories reach the database: gathered group commits (each trajectory still
all-or-nothing), the rows they write, and the run-wide GC freeze around them."""

from __future__ import annotations

import asyncio
import gc
import time
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select, col

from evaluation.harness.committer import GroupCommitter
from store.heap import existing_objects_frozen
from evaluation.harness.recorder import (
    CacheEntry,
    FinishedTrajectory,
    Recorder,
    commit_many,
    mark_unstorable,
    ensure_trajectories,
)
from store import session_scope
from store.models import Benchmark, Event, EventAsset, ReplayCache, Run, TaskAsset, Trajectory, utcnow


class FakeDb:
    """Stands in for DbRunner: records each commit_many batch; items named in ``bad`` make it fail."""

    dialect = "sqlite"

    def __init__(self, bad: set[int] | None = None):
        self.batches: list[list[int]] = []
        self.bad = bad or set()
        self.marked_failed: list[tuple[int, str]] = []

    async def call(self, fn: Any, items: Any, *args: Any) -> None:
        if fn is mark_unstorable:
            self.marked_failed.append((items, args[0]))
            return
        assert fn is commit_many
        ids = [i.trajectory_id for i in items]
        await asyncio.sleep(0)
        if self.bad & set(ids):
            raise RuntimeError(f"cannot commit {sorted(self.bad & set(ids))}")
        self.batches.append(ids)


def finished(tid: int) -> FinishedTrajectory:
    return FinishedTrajectory(tid, Recorder(), "done", "x", {}, None, [], 1, utcnow())


async def test_trajectories_finishing_close_together_share_one_commit() -> None:
    db, outcomes = FakeDb(), {}
    committer = GroupCommitter(db, batch=10, gather_s=0.05)  # type: ignore[arg-type]
    for tid in (1, 2, 3):
        committer.submit(finished(tid), lambda exc, tid=tid: outcomes.__setitem__(tid, exc))
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.1)
    assert db.batches == [[1, 2, 3]] and outcomes == {1: None, 2: None, 3: None}
    await committer.drain()


async def test_a_full_batch_is_committed_without_waiting_out_the_window() -> None:
    db = FakeDb()
    committer = GroupCommitter(db, batch=2, gather_s=30)  # type: ignore[arg-type]
    committer.submit(finished(1), lambda exc: None)
    committer.submit(finished(2), lambda exc: None)
    await asyncio.wait_for(asyncio.shield(committer.flusher), 2)  # type: ignore[arg-type]
    assert db.batches == [[1, 2]]


async def test_drain_commits_what_waits_at_once() -> None:
    db = FakeDb()
    committer = GroupCommitter(db, batch=100, gather_s=30)  # type: ignore[arg-type]
    committer.submit(finished(7), lambda exc: None)
    started = time.monotonic()
    await asyncio.wait_for(committer.drain(), 2)
    assert db.batches == [[7]] and time.monotonic() - started < 1


async def test_one_bad_trajectory_does_not_sink_the_others_of_its_batch() -> None:
    db, outcomes = FakeDb(bad={2}), {}
    committer = GroupCommitter(db, batch=3, gather_s=30)  # type: ignore[arg-type]
    for tid in (1, 2, 3):
        committer.submit(finished(tid), lambda exc, tid=tid: outcomes.__setitem__(tid, exc))
    await committer.drain()
    assert db.batches == [[1], [3]]
    assert outcomes[1] is None and outcomes[3] is None and "cannot commit [2]" in str(outcomes[2])
    assert db.marked_failed == [(2, "the trajectory could not be stored: RuntimeError: cannot commit [2]")]


def _run_with_tasks(engine: Engine, make_bench: Any, n: int) -> tuple[int, list[int]]:
    task_ids = make_bench("commits", n=n)
    with session_scope(engine) as s:
        bench = s.exec(select(Benchmark).where(Benchmark.name == "commits")).one()
        run = Run(benchmark_id=bench.id or 0, kind="model", mode="atomic", budgets={}, config={}, status="running")
        s.add(run)
        s.flush()
        return run.id or 0, task_ids


def test_commit_many_writes_events_links_state_and_cache(engine: Engine, make_bench: Any) -> None:
    run_id, task_ids = _run_with_tasks(engine, make_bench, 2)
    with session_scope(engine) as s:
        trajectories = ensure_trajectories(s, run_id, task_ids)
        asset_id = s.exec(select(TaskAsset.asset_id)).first()
    t0 = utcnow()
    items = []
    for n, task_id in enumerate(task_ids):
        rec = Recorder()
        rec.add(
            "user_message",
            {"role": "user", "content": [{"type": "image", "asset_id": asset_id}]},
            started_at=t0,
            assets=[(asset_id, "input")],
        )
        rec.add("model_message", {"content": f"<answer>{n}</answer>"}, started_at=t0 + timedelta(seconds=1))
        items.append(
            FinishedTrajectory(
                trajectories[task_id],
                rec,
                "done" if n else "failed",
                str(n) if n else None,
                {"api_calls": 1},
                None if n else "boom",
                [CacheEntry(f"k{n}", "model", {"q": n}, {"a": n}), CacheEntry("shared", "model", {"q": n}, {"a": n})],
                3,
                t0,
            )
        )
    with session_scope(engine) as s:
        commit_many(s, items)
    with session_scope(engine) as s:  # committing a finished trajectory again replaces its events
        commit_many(s, items[1:])
    with session_scope(engine) as s:
        rows = s.exec(select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.id))).all()
        assert [(r.status, r.final_answer, r.error, r.task_revision, r.usage) for r in rows] == [
            ("failed", None, "boom", 3, {"api_calls": 1}),
            ("done", "1", None, 3, {"api_calls": 1}),
        ]
        assert all(r.finished_at is not None and r.started_at is not None for r in rows)
        for r in rows:
            events = s.exec(select(Event).where(Event.trajectory_id == r.id).order_by(col(Event.ordinal))).all()
            assert [(e.ordinal, e.kind) for e in events] == [(0, "user_message"), (1, "model_message")]
            links = s.exec(select(EventAsset).where(EventAsset.event_id == events[0].id)).all()
            assert [(link.asset_id, link.role, link.ordinal) for link in links] == [(asset_id, "input", 0)]
            assert not s.exec(select(EventAsset).where(EventAsset.event_id == events[1].id)).all()
        cache = {c.key: c.response for c in s.exec(select(ReplayCache)).all()}
        assert cache == {"k0": {"a": 0}, "k1": {"a": 1}, "shared": {"a": 1}}  # the newest entry wins


def test_a_vanished_trajectory_fails_its_commit(engine: Engine) -> None:
    with pytest.raises(LookupError, match="vanished"), session_scope(engine) as s:
        commit_many(s, [finished(424242)])


def test_existing_objects_are_frozen_only_while_runs_go() -> None:
    before = gc.get_freeze_count()
    with existing_objects_frozen():
        outer = gc.get_freeze_count()
        with existing_objects_frozen():  # a second run at the same time
            assert gc.get_freeze_count() >= outer > before
        assert gc.get_freeze_count() >= outer
    assert gc.get_freeze_count() == 0


def test_a_hold_asked_after_its_release_is_refused() -> None:
    """The TUI holds the freeze from a worker once its first screen has data: an app that ended before
    the worker got there must not leave the heap frozen."""
    from store.heap import HeapHold

    late = HeapHold()
    late.release()
    assert late.hold() is False and gc.get_freeze_count() == 0
    share = HeapHold()
    assert share.hold() is True and share.hold() is False and gc.get_freeze_count() > 0
    share.release()
    share.release()
    assert gc.get_freeze_count() == 0


def test_a_host_freeze_is_left_alone() -> None:
    """The TUI freezes its startup heap; a run inside it neither adds a freeze nor lifts the host's."""
    gc.freeze()
    try:
        from store import heap

        assert gc.get_freeze_count() > 0
        with existing_objects_frozen():
            assert heap._ours is False  # the host's freeze is not ours to lift
        # Still frozen (an unfreeze empties the permanent generation; another thread may free a few
        # frozen objects meanwhile, so the count itself is not compared).
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


async def test_a_store_that_refuses_writes_stops_the_committer_and_says_why() -> None:
    import sqlalchemy.exc as sa_exc

    from evaluation.harness.committer import StoreRefused

    class FullDb(FakeDb):
        async def call(self, fn: Any, items: Any, *args: Any) -> None:
            await asyncio.sleep(0)
            raise sa_exc.OperationalError("INSERT", {}, Exception("database or disk is full"))

    reasons: list[str] = []
    outcomes: dict[int, Any] = {}
    committer = GroupCommitter(FullDb(), batch=2, gather_s=30, on_refused=reasons.append)  # type: ignore[arg-type]
    for tid in (1, 2):
        committer.submit(finished(tid), lambda exc, tid=tid: outcomes.__setitem__(tid, exc))
    await committer.drain()
    committer.submit(finished(3), lambda exc: outcomes.__setitem__(3, exc))  # refused at once, nothing tried
    assert reasons == ["the database refused a write (database or disk is full)"]
    assert all(isinstance(outcomes[t], StoreRefused) for t in (1, 2, 3))


def test_plain_sqlite_rows_are_the_core_statements_rows(engine: Engine, make_bench: Any, monkeypatch: Any) -> None:
    """On SQLite a commit's events, asset links and trajectory updates go through plain executemany
    statements (``store.plain_rows``); the stored column values are byte for byte the Core statements'."""
    import sqlite3

    from evaluation.harness import recorder

    task_ids = make_bench("commits", n=2)
    with session_scope(engine) as s:
        asset_id = s.exec(select(TaskAsset.asset_id)).first()
    assert asset_id is not None
    t0 = utcnow()
    monkeypatch.setattr(recorder, "utcnow", lambda: t0 + timedelta(seconds=9))

    def items(trajectories: dict[int, int]) -> list[FinishedTrajectory]:
        out = []
        for n, task_id in enumerate(task_ids):
            rec = Recorder()
            rec.add(
                "user_message",
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "é ✓ \u2028"}, {"type": "image", "asset_id": asset_id}],
                },
                started_at=t0,
                assets=[(asset_id, "input"), (asset_id, "output")],
            )
            rec.add("error", {"type": "retry", "message": "x"}, failed=True, started_at=t0)
            rec.events[-1].finished_at = None
            out.append(
                FinishedTrajectory(
                    trajectories[task_id],
                    rec,
                    "done" if n else "failed",
                    "ünï" if n else None,
                    {"api_calls": 1, "wall_s": 0.25, "nested": [1, None, True]} if n else {},
                    None if n else "boom",
                    [],
                    5 if n else None,  # type: ignore[arg-type]  # None keeps the stored revision
                    t0 if n else None,  # type: ignore[arg-type]  # None keeps the stored start
                )
            )
        return out

    def stored(run_id: int) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(engine.url.database or "")
        try:
            trajectories = con.execute(
                "SELECT task_id, status, final_answer, usage, error, finished_at, task_revision, started_at"
                " FROM trajectory WHERE run_id = ? ORDER BY task_id",
                (run_id,),
            ).fetchall()
            events = con.execute(
                "SELECT t.task_id, e.ordinal, e.kind, e.payload, e.failed, e.started_at, e.finished_at, a.asset_id,"
                " a.ordinal, a.role FROM event e JOIN trajectory t ON t.id = e.trajectory_id"
                " LEFT JOIN eventasset a ON a.event_id = e.id WHERE t.run_id = ? ORDER BY t.task_id, e.ordinal, a.ordinal",
                (run_id,),
            ).fetchall()
        finally:
            con.close()
        return trajectories + events

    rows = {}
    for plain in (True, False):
        monkeypatch.setattr(recorder, "_plain", lambda conn, plain=plain: plain)
        run_id, _ = _run_with_tasks(engine, lambda *a, **k: task_ids, 0)
        with session_scope(engine) as s:
            trajectories = ensure_trajectories(s, run_id, task_ids)
        with session_scope(engine) as s:
            commit_many(s, items(trajectories))
        rows[plain] = stored(run_id)
    assert len(rows[True]) == 2 + 2 * 3  # two trajectories; each: an event with two links, an event with none
    assert rows[True] == rows[False]
