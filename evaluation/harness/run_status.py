"""What a run's listing says about it beyond its row: who holds its lease and whether that holder
is alive, and for a queued run how many of its trajectories workers hold now.

Read in plain SQL text (``store.sql``), so ``chainmark runs list`` reads them on SQLite through
``sqlite3`` without importing SQLAlchemy (bench/bench_startup.py); ``evaluation.harness.lease``,
``evaluation.harness.workqueue`` and the TUI use the same functions on their sessions.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from store.sql import chunks, in_list, rows, timestamp

RESUME_HINT = "chainmark run --resume {run_id}"
TASK_SET = "task_set"
"""The key of a run config's list of the task ids the run is made of, fixed when it is created."""


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


class _LeaseRow(NamedTuple):
    run_id: int
    host: str
    pid: int
    heartbeat_at: datetime
    expires_at: datetime


_LEASES = (
    "SELECT runlease.run_id, runlease.host, runlease.pid, runlease.heartbeat_at, runlease.expires_at FROM runlease"
)


def leases(session: Any, run_ids: list[int] | None = None) -> dict[int, LeaseInfo]:
    """Run id → its lease as seen now, for the runs ``run_ids`` (all runs when None); ``session`` is
    any reader of ``store.sql.rows``."""
    asked: list[tuple[str, dict[str, Any]]] = [(_LEASES, {})]
    if run_ids is not None:
        asked = [
            (f"{_LEASES} WHERE runlease.run_id IN {ids}", p)
            for ids, p in (in_list("run_id", c) for c in chunks(run_ids))
        ]
    now = datetime.now(UTC)
    found = [
        _LeaseRow(rid, host, pid, timestamp(beat), timestamp(exp))
        for sql, p in asked
        for rid, host, pid, beat, exp in rows(session, sql, p)
    ]
    return {r.run_id: describe(r, now) for r in found}


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


def live_claims(session: Any, run_ids: list[int]) -> dict[int, int]:
    """Run id → trajectories held right now by a worker whose claim has not expired (the condition
    of ``store.claims.is_held``, the database's clock deciding; a test holds the two equal)."""
    out: dict[int, int] = {}
    for chunk in chunks(run_ids):
        ids, params = in_list("run_id", chunk)
        sql = (
            "SELECT c.run_id, count(*) FROM trajectoryclaim AS c WHERE c.run_id IN "
            f"{ids} AND c.finished_at IS NULL AND c.token IS NOT NULL AND c.expires_at > CURRENT_TIMESTAMP "
            "GROUP BY c.run_id"
        )
        out.update({int(r): int(n) for r, n in rows(session, sql, params)})
    return out
