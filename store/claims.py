"""Leased claims on a work table (PostgreSQL): the one lease model queued runs and queued judging share.

A claim table has one row per unit of work and the columns ``token``, ``host``, ``pid``,
``attempts``, ``claimed_at``, ``heartbeat_at``, ``expires_at`` and ``finished_at``. A row is open
while ``finished_at`` is empty; it is free to take when nobody holds it or its holder's expiry has
passed (a dead worker's). Workers take rows with ``SELECT … FOR UPDATE SKIP LOCKED`` (they never wait
for each other), renew their expiry from a heartbeat, and finish a row only through ``fence``: in the
transaction that writes the work's result, and only while the token and attempt are still theirs, so
a worker that lost a row to a takeover writes nothing. Times come from the database's clock, so hosts
with skewed clocks agree on expiry.

The callers (``evaluation.harness.workqueue``, ``evaluation.judges.queue``) say what a unit of work
is and what taking, finishing or giving it back means for their own rows.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

if TYPE_CHECKING:
    from sqlmodel import Session

NEEDS_POSTGRES = (
    "queued work (`--queue`) and `chainmark worker` need PostgreSQL (SKIP LOCKED, many writers); "
    "set the database URL to a postgresql+psycopg://… URL"
)


class QueueUnsupported(RuntimeError):
    """The database cannot hold a work queue (SQLite)."""


def require_postgres(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        raise QueueUnsupported(NEEDS_POSTGRES)


def now() -> Any:
    return sa.func.now()  # the database's clock: every host agrees on it


def later(seconds: float) -> Any:
    return sa.func.now() + sa.func.make_interval(0, 0, 0, 0, 0, 0, float(seconds))


def this_worker() -> tuple[str, int]:
    return socket.gethostname(), os.getpid()


def is_free(table: sa.Table) -> Any:
    """Open and held by nobody alive."""
    c = table.c
    return sa.and_(c.finished_at.is_(None), sa.or_(c.token.is_(None), c.expires_at <= now()))


def is_held(table: sa.TableClause) -> Any:
    """Open and held by a worker whose claim has not expired."""
    c = table.c
    return sa.and_(c.finished_at.is_(None), c.token.is_not(None), c.expires_at > now())


def take(
    session: Session,
    table: sa.Table,
    key: sa.Column[Any],
    where: Sequence[Any],
    order: Any,
    n: int,
    token: str,
    ttl: float,
) -> list[Any]:
    """Take up to ``n`` free rows matching ``where`` for ``token`` (skipping rows another transaction
    has locked); their attempt count goes up by one. Returns the keys taken."""
    keys = list(
        session.execute(
            sa.select(key).where(is_free(table), *where).order_by(order).limit(n).with_for_update(skip_locked=True)
        )
        .scalars()
        .all()
    )
    if not keys:
        return []
    host, pid = this_worker()
    c = table.c
    session.execute(
        sa.update(table)
        .where(key.in_(keys))
        .values(
            token=token,
            host=host,
            pid=pid,
            claimed_at=now(),
            heartbeat_at=now(),
            expires_at=later(ttl),
            attempts=c.attempts + 1,
        )
    )
    return keys


def renew(session: Session, table: sa.Table, token: str, ttl: float) -> None:
    """Push the expiry of every open row ``token`` holds forward."""
    c = table.c
    session.execute(
        sa.update(table)
        .where(c.token == token, c.finished_at.is_(None))
        .values(heartbeat_at=now(), expires_at=later(ttl))
    )


def release(
    session: Session, table: sa.Table, key: sa.Column[Any], token: str, keys: list[Any] | None = None
) -> list[Any]:
    """Give back open rows ``token`` holds (all, or ``keys``): free again at once. Returns their keys."""
    c = table.c
    cond = [c.token == token, c.finished_at.is_(None)]
    if keys is not None:
        cond.append(key.in_(keys))
    return list(
        session.execute(sa.update(table).where(*cond).values(token=None, expires_at=None).returning(key))
        .scalars()
        .all()
    )


def fence(
    session: Session,
    table: sa.Table,
    key: sa.Column[Any],
    token: str,
    claims: list[tuple[Any, int]],
    *,
    finish: bool = True,
    **values: Any,
) -> set[Any]:
    """The rows of ``claims`` (key, attempt) still held by ``token`` under that attempt, locked until
    the transaction ends; with ``finish`` they are marked finished (and given ``values``). Write the
    work's result in the same transaction, and only for the keys returned."""
    if not claims:
        return set()
    c = table.c
    cond = [sa.tuple_(key, c.attempts).in_(claims), c.token == token, c.finished_at.is_(None)]
    if not finish:
        return set(session.execute(sa.select(key).where(*cond).with_for_update()).scalars().all())
    return set(
        session.execute(
            sa.update(table).where(*cond).values(finished_at=now(), heartbeat_at=now(), **values).returning(key)
        )
        .scalars()
        .all()
    )
