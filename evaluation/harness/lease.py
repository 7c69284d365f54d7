"""One executor per run: a lease row (host, pid, heartbeat, expiry) taken atomically before a run
executes and renewed while it goes.

Taking the lease is one short write transaction that locks first (``BEGIN IMMEDIATE`` on SQLite —
the engine's default —, ``SELECT … FOR UPDATE`` of the run row on PostgreSQL), so of two executors
starting together exactly one wins. The loser gets ``LeaseHeld`` naming the holder. A lease is
stale when its heartbeat expired, or when its process is gone on this same host (kill -9); a stale
lease is taken over. A run whose status says "running" but whose lease is stale or missing was
interrupted: ``shown_status`` says so, and ``RESUME_HINT`` says how to continue it.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evaluation.harness.run_status import (  # noqa: F401  (re-exported: the lease's readers import them from here)
    RESUME_HINT,
    LeaseInfo,
    describe,
    leases,
    shown_status,
    this_host,
)
from store import core_tables as t
from store.clock import utcnow
from store.core_tables import connection_of
from store.dialects import needs_row_locks

DEFAULT_TTL = 60.0  # seconds a heartbeat keeps the lease; renewed every TTL / 4


class LeaseHeld(RuntimeError):
    """Another live process is executing this run."""

    def __init__(self, run_id: int, holder: LeaseInfo) -> None:
        self.run_id, self.holder = run_id, holder
        super().__init__(
            f"run {run_id} is already being executed by pid {holder.pid} on {holder.host} "
            f"(heartbeat {holder.age:.0f} s ago); wait for it to finish, or cancel it there"
        )


def ttl_seconds() -> float:
    from store.settings import current

    return current().lease_seconds


_L = t.runlease


def _lease_row(session: Any, run_id: int) -> Any:
    return session.execute(sa.select(_L).where(_L.c.run_id == run_id)).first()


def _take(session: Any, run_id: int, token: str, ttl: float) -> bool:
    """Write our lease row; False when there is no such run (the runner reports that itself). In the
    caller's write transaction: a connection, or an ORM session."""
    stmt = sa.select(t.run.c.id).where(t.run.c.id == run_id)
    if needs_row_locks(connection_of(session)):
        stmt = stmt.with_for_update()
    if session.execute(stmt).first() is None:
        return False
    row = _lease_row(session, run_id)
    now = utcnow()
    if row is not None and row.token != token:
        info = describe(row, now)
        if not info.stale:
            raise LeaseHeld(run_id, info)
        session.execute(sa.delete(_L).where(_L.c.run_id == run_id))
        row = None
    expires = now + timedelta(seconds=ttl)
    if row is None:
        session.execute(
            sa.insert(_L).values(
                run_id=run_id,
                token=token,
                host=this_host(),
                pid=os.getpid(),
                acquired_at=now,
                heartbeat_at=now,
                expires_at=expires,
            )
        )
    else:
        session.execute(sa.update(_L).where(_L.c.run_id == run_id).values(heartbeat_at=now, expires_at=expires))
    return True


def _renew(session: Any, run_id: int, token: str, ttl: float) -> bool:
    now = utcnow()
    renewed = session.execute(
        sa.update(_L)
        .where(_L.c.run_id == run_id, _L.c.token == token)
        .values(heartbeat_at=now, expires_at=now + timedelta(seconds=ttl))
    )
    return bool(renewed.rowcount)


def _release(session: Any, run_id: int, token: str) -> None:
    session.execute(sa.delete(_L).where(_L.c.run_id == run_id, _L.c.token == token))


@contextmanager
def run_lease(engine: Engine, run_id: int, *, ttl: float | None = None) -> Iterator[LeaseInfo | None]:
    """Hold the run's lease for the block: take it (or raise ``LeaseHeld``), renew it from a
    background thread, give it back at the end. A killed process leaves it to expire."""
    ttl = ttl or ttl_seconds()
    token = uuid.uuid4().hex
    with engine.begin() as s:
        taken = _take(s, run_id, token, ttl)
    if not taken:
        yield None  # type: ignore[misc]
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(ttl / 4):
            try:
                with engine.begin() as s:
                    if not _renew(s, run_id, token, ttl):
                        return  # taken over after we stalled past the expiry: the new holder rules
            except Exception:  # noqa: BLE001, S112 - a busy database: try again at the next beat
                continue

    keeper = threading.Thread(target=beat, name=f"chainmark-lease-{run_id}", daemon=True)
    keeper.start()
    try:
        with engine.begin() as s:
            row = _lease_row(s, run_id)
            info = describe(row) if row is not None else None
        yield info
    finally:
        stop.set()
        keeper.join(timeout=5)
        try:
            with engine.begin() as s:
                _release(s, run_id, token)
        except Exception:  # noqa: BLE001 - a store refusing writes (full, read-only, locked) must not hide
            pass  # why the run stopped; our pid is gone soon, so the lease reads as stale anyway
