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
from sqlmodel import Session

from store.models import Trajectory, utcnow

UNFINISHED = ("pending", "running")


def write_live(session: Session, trajectory_id: int, usage: dict[str, Any]) -> None:
    table = Trajectory.__table__  # type: ignore[attr-defined]
    values: dict[str, Any] = {"status": "running", "usage": usage}
    if usage.get("step") == "starting":
        values["started_at"] = utcnow()
    session.execute(
        sa.update(table).where(table.c.id == trajectory_id, table.c.status.in_(UNFINISHED)).values(**values)
    )


def write_live_many(session: Session, reports: dict[int, dict[str, Any]]) -> None:
    """Several trajectories' newest reports in one statement each way (executemany): those whose
    report set starts them (``_started`` or step ``starting``) also get ``started_at``."""
    table = Trajectory.__table__  # type: ignore[attr-defined]
    started: list[dict[str, Any]] = []
    going: list[dict[str, Any]] = []
    for trajectory_id, usage in reports.items():
        first = bool(usage.pop("_started", False)) or usage.get("step") == "starting"
        (started if first else going).append({"_id": trajectory_id, "_usage": usage})
    where = sa.and_(table.c.id == sa.bindparam("_id"), table.c.status.in_(UNFINISHED))
    values: dict[str, Any] = {"status": "running", "usage": sa.bindparam("_usage")}
    if going:
        session.execute(sa.update(table).where(where).values(**values), going)
    if started:
        session.execute(sa.update(table).where(where).values(**values, started_at=utcnow()), started)


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
