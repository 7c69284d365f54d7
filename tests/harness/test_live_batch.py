"""A run's progress reports are gathered (``livedb.BatchedLiveDb``): a trajectory still
running shows its newest usage, step and start time, a report never undoes a commit, and many
reports cost one transaction."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import select

from evaluation.harness import RunSpec, create_run
from evaluation.harness.live import report
from evaluation.harness.livedb import BatchedLiveDb
from evaluation.harness.recorder import ensure_trajectories
from store import session_scope
from store.models import Trajectory


def _trajectories(engine: Engine, make_bench: Any, endpoint: str, n: int) -> list[int]:
    task_ids = make_bench("mme", n=n)
    with session_scope(engine, "tester") as s:
        run = create_run(s, RunSpec("mme", endpoint, "atomic"))
        made = ensure_trajectories(s, int(run.id or 0), task_ids)
    return [made[t] for t in task_ids]


def test_reports_are_coalesced_newest_first_in_one_transaction(engine: Engine, make_bench, endpoint: str) -> None:
    ids = _trajectories(engine, make_bench, endpoint, 3)
    updates: list[int] = []  # rows per UPDATE of trajectory rows sent to the database

    def count(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.startswith("UPDATE trajectory"):
            updates.append(len(parameters) if executemany else 1)

    event.listen(engine, "before_cursor_execute", count)

    async def go() -> None:
        pool = ThreadPoolExecutor(1)
        db = BatchedLiveDb(engine, pool, "tester", every=60.0)  # nothing leaves before close
        for n, tid in enumerate(ids):
            report(db, tid, {"api_calls": 0}, "starting")
            report(db, tid, {"api_calls": 1, "total_tokens": 10 * (n + 1)}, "after model call")
        if ids:
            report(db, ids[0], {"api_calls": 2, "total_tokens": 99}, "tool crop")
        assert updates == []  # gathered, not written one by one
        await db.close()  # writes what is gathered
        pool.shutdown(wait=True)

    asyncio.run(go())
    with session_scope(engine) as s:
        rows = {t.id: t for t in s.exec(select(Trajectory).where(Trajectory.id.in_(ids)))}  # type: ignore[union-attr]
    assert rows[ids[0]].usage == {"api_calls": 2, "total_tokens": 99, "step": "tool crop"}
    assert rows[ids[1]].usage == {"api_calls": 1, "total_tokens": 20, "step": "after model call"}
    assert all(r.status == "running" and r.started_at is not None for r in rows.values())
    assert updates == [3]  # seven reports: one statement, the newest of each trajectory


def test_a_late_report_does_not_undo_a_commit(engine: Engine, make_bench, endpoint: str) -> None:
    (tid,) = _trajectories(engine, make_bench, endpoint, 1)
    with session_scope(engine) as s:
        t = s.get(Trajectory, tid)
        t.status, t.usage = "done", {"api_calls": 3}  # type: ignore[union-attr]

    async def go() -> None:
        pool = ThreadPoolExecutor(1)
        db = BatchedLiveDb(engine, pool, "tester")
        report(db, tid, {"api_calls": 1}, "after model call")
        await db.close()
        pool.shutdown(wait=True)

    asyncio.run(go())
    with session_scope(engine) as s:
        t = s.get(Trajectory, tid)
        assert (t.status, t.usage) == ("done", {"api_calls": 3})  # type: ignore[union-attr]
