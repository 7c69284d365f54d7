"""What a run's listing says about it beyond its row: who holds its lease and whether that holder
is alive, and for a queued run how many of its trajectories workers hold now.

Read in SQLAlchemy Core over ``store.columns`` and free of the ORM tables, so ``chainmark runs list``
starts without building them (bench/bench_startup.py); ``evaluation.harness.lease`` and
``evaluation.harness.workqueue`` use the same functions.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from store import claims
from store import columns as tables

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

RESUME_HINT = "chainmark run --resume {run_id}"


@dataclass(frozen=True)
class LeaseInfo:
    run_id: int
    host: str
    pid: int
    heartbeat_at: datetime
    expires_at: datetime
    stale: bool
    age: float  # seconds since the last heartbeat


def this_host() -> str:
    return socket.gethostname()


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)  # SQLite drops the zone


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    try:  # a zombie (killed, not yet reaped by its parent) holds nothing any more
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def describe(row: Any, now: datetime | None = None) -> LeaseInfo:
    """A lease row (a ``RunLease`` or a Core row with its columns) as seen now."""
    now = now or datetime.now(UTC)
    expired = _aware(row.expires_at) <= now
    gone = row.host == this_host() and not _pid_alive(row.pid)
    return LeaseInfo(
        row.run_id,
        row.host,
        row.pid,
        _aware(row.heartbeat_at),
        _aware(row.expires_at),
        expired or gone,
        (now - _aware(row.heartbeat_at)).total_seconds(),
    )


def leases(session: Session | Connection, run_ids: list[int] | None = None) -> dict[int, LeaseInfo]:
    stmt = sa.select(tables.runlease)
    if run_ids is not None:
        stmt = stmt.where(tables.runlease.c.run_id.in_(run_ids))
    now = datetime.now(UTC)
    return {r.run_id: describe(r, now) for r in session.execute(stmt).all()}


def shown_status(status: str, lease: LeaseInfo | None, live_claims: int | None = None) -> str:
    """A "running" run with no live executor was interrupted (killed, machine lost). A queued run
    (``live_claims`` given) has no single executor: it is "running" while some worker holds a
    trajectory of it and "queued" (waiting for a worker) while none does."""
    if live_claims is not None:
        return "queued" if status == "running" and live_claims == 0 else status
    if status == "running" and (lease is None or lease.stale):
        return "interrupted"
    return status


def is_queued(run: Any) -> bool:
    """Whether the run (a ``Run`` or a row with its ``config``) was put in the database for workers."""
    return bool((run.config or {}).get("queue"))


def live_claims(session: Session | Connection, run_ids: list[int]) -> dict[int, int]:
    """Run id → trajectories held right now by a worker whose claim has not expired."""
    if not run_ids:
        return {}
    c = tables.trajectoryclaim
    rows = session.execute(
        sa.select(c.c.run_id, sa.func.count()).where(c.c.run_id.in_(run_ids), claims.is_held(c)).group_by(c.c.run_id)
    ).all()
    return {int(r): int(n) for r, n in rows}
