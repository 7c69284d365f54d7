"""Per-call progress in the database while a trajectory runs, so any monitor (this process after a
resume, or another terminal) sees calls, tokens and the current step before the trajectory ends.

The episode reports after every model call and before every tool call; the write goes through the
run's database thread without being awaited (a monitor number must never slow a model call). A
trajectory being worked on is marked ``running`` with its usage so far and ``usage["step"]``; only
rows not yet finished are touched, so a late report cannot undo a commit, and a killed run's
``running`` rows are reset to pending on resume as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

import sqlalchemy as sa

from store.clock import utcnow
from store.core_tables import trajectory as _TRAJECTORY

UNFINISHED = ("pending", "running")


def write_live(session: Any, trajectory_id: int, usage: dict[str, Any]) -> None:
    """One report, in the caller's transaction (a connection or an ORM session)."""
    table = _TRAJECTORY
    values: dict[str, Any] = {"status": "running", "usage": usage}
    if usage.get("step") == "starting":
        values["started_at"] = utcnow()
    session.execute(
        sa.update(table).where(table.c.id == trajectory_id, table.c.status.in_(UNFINISHED)).values(**values)
    )


# No IN (…) here: executemany cannot take its expanding parameter.
_LIVE = sa.update(_TRAJECTORY).where(
    _TRAJECTORY.c.id == sa.bindparam("tid"), sa.or_(*(_TRAJECTORY.c.status == s for s in UNFINISHED))
)


def write_live_many(session: Any, batch: dict[int, dict[str, Any]]) -> None:
    """``write_live`` for many trajectories at once (trajectory id → usage; ``_started`` in a usage
    marks a trajectory whose "starting" report was folded into it): two executemany statements."""
    started, going = [], []
    now = utcnow()
    for trajectory_id, usage in batch.items():
        usage = dict(usage)
        first = usage.pop("_started", False) or usage.get("step") == "starting"
        row = {"tid": trajectory_id, "usage": usage}
        if first:
            started.append({**row, "started_at": now})
        else:
            going.append(row)
    usage_param = sa.bindparam("usage", type_=sa.JSON)
    if started:
        session.execute(
            _LIVE.values(status="running", usage=usage_param, started_at=sa.bindparam("started_at")), started
        )
    if going:
        session.execute(_LIVE.values(status="running", usage=usage_param), going)


def report(db: Any, trajectory_id: int, usage: dict[str, Any], step: str) -> None:
    """Queue the write and forget it (errors are swallowed: progress is a courtesy, not a record)."""
    try:
        fut = db.submit(write_live, trajectory_id, {**usage, "step": step})
    except RuntimeError:  # no running loop (a unit test driving an episode by hand)
        return
    fut.add_done_callback(_quiet)


def _quiet(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()
