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

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from evaluation.harness.run_status import (  # noqa: F401  (re-exported: the lease's readers import them from here)
    RESUME_HINT,
    LeaseInfo,
    describe,
    leases,
    shown_status,
    this_host,
)
from store import session_scope
from store.models import Run, RunLease, utcnow

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


def _take(session: Session, run_id: int, token: str, ttl: float) -> bool:
    """Write our lease row; False when there is no such run (the runner reports that itself)."""
    stmt = select(Run).where(Run.id == run_id)
    if session.get_bind().dialect.name != "sqlite":  # SQLite: BEGIN IMMEDIATE already holds the write lock
        stmt = stmt.with_for_update()
    if session.exec(stmt).first() is None:
        return False
    row = session.get(RunLease, run_id)
    now = utcnow()
    if row is not None and row.token != token:
        info = describe(row, now)
        if not info.stale:
            raise LeaseHeld(run_id, info)
        session.delete(row)
        session.flush()
        row = None
    expires = now + timedelta(seconds=ttl)
    if row is None:
        session.add(
            RunLease(
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
        row.heartbeat_at, row.expires_at = now, expires
    session.flush()
    return True


def _renew(session: Session, run_id: int, token: str, ttl: float) -> bool:
    row = session.get(RunLease, run_id)
    if row is None or row.token != token:
        return False
    now = utcnow()
    row.heartbeat_at, row.expires_at = now, now + timedelta(seconds=ttl)
    return True


def _release(session: Session, run_id: int, token: str) -> None:
    row = session.get(RunLease, run_id)
    if row is not None and row.token == token:
        session.delete(row)


@contextmanager
def run_lease(engine: Engine, run_id: int, *, ttl: float | None = None) -> Iterator[LeaseInfo | None]:
    """Hold the run's lease for the block: take it (or raise ``LeaseHeld``), renew it from a
    background thread, give it back at the end. A killed process leaves it to expire."""
    ttl = ttl or ttl_seconds()
    token = uuid.uuid4().hex
    with session_scope(engine) as s:
        taken = _take(s, run_id, token, ttl)
    if not taken:
        yield None  # type: ignore[misc]
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(ttl / 4):
            try:
                with session_scope(engine) as s:
                    if not _renew(s, run_id, token, ttl):
                        return  # taken over after we stalled past the expiry: the new holder rules
            except Exception:  # noqa: BLE001, S112 - a busy database: try again at the next beat
                continue

    keeper = threading.Thread(target=beat, name=f"chainmark-lease-{run_id}", daemon=True)
    keeper.start()
    try:
        with session_scope(engine) as s:
            row = s.get(RunLease, run_id)
            info = describe(row) if row is not None else None
        yield info
    finally:
        stop.set()
        keeper.join(timeout=5)
        try:
            with session_scope(engine) as s:
                _release(s, run_id, token)
        except Exception:  # noqa: BLE001 - a store refusing writes (full, read-only, locked) must not hide
            pass  # why the run stopped; our pid is gone soon, so the lease reads as stale anyway
