"""The listings' plain SQL (store.sql) reads the same on every reader, and says what the Core it
replaced said: on SQLite through ``sqlite3`` and through SQLAlchemy (a connection, the TUI's ORM
session), on PostgreSQL through SQLAlchemy."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import select

from evaluation.harness.run_status import leases, live_claims
from store import claims, read_scope, session_scope
from store.models import RunLease, TrajectoryClaim
from store.queries import benchmark_summaries, count_tasks, recent_runs, task_summaries
from store.sql import IN_CHUNK, in_list
from tests.support.listing_data import fill


def _readings(reader: Any) -> dict[str, Any]:
    return {
        "benchmarks": benchmark_summaries(reader),
        "tasks": task_summaries(reader, status="draft", text="ü"),
        "count": count_tasks(reader, "alpha", category="perception"),
        "recent": recent_runs(reader, 5),
        "leases": {k: (v.host, v.stale, v.expires_at) for k, v in leases(reader, [1, 2, 3, 4]).items()},
        "claims": live_claims(reader, [5, 6]),
    }


def test_every_reader_reads_the_same(any_engine: Engine) -> None:
    fill(any_engine)
    with read_scope(any_engine) as conn:
        through_connection = _readings(conn)
    with session_scope(any_engine) as s:  # the TUI reads these on its ORM session
        assert _readings(s) == through_connection
    if any_engine.dialect.name == "sqlite":
        plain = sqlite3.connect(any_engine.url.database or "")
        try:
            assert _readings(plain) == through_connection
        finally:
            plain.close()
    assert through_connection["claims"] == {5: 5}  # held: token set, not finished, not expired
    assert set(through_connection["leases"]) == {3, 4}
    assert through_connection["count"] == 3


def test_live_claims_count_what_claims_is_held_holds(any_engine: Engine) -> None:
    """live_claims writes ``store.claims.is_held`` as SQL text: the two agree row for row."""
    fill(any_engine)
    c = TrajectoryClaim.__table__  # type: ignore[attr-defined]
    with read_scope(any_engine) as conn:
        core: dict[int, int] = dict(
            conn.execute(sa.select(c.c.run_id, sa.func.count()).where(claims.is_held(c)).group_by(c.c.run_id)).all()
        )
        assert live_claims(conn, [1, 5, 6]) == core
        assert core and live_claims(conn, []) == {}


def test_leases_read_as_the_orm_rows_say(any_engine: Engine) -> None:
    fill(any_engine)
    with session_scope(any_engine) as s:
        rows = {r.run_id: r for r in s.exec(select(RunLease)).all()}
        read = leases(s)
    assert set(read) == set(rows)
    for run_id, lease in read.items():
        assert (lease.host, lease.pid) == (rows[run_id].host, rows[run_id].pid)
        assert lease.expires_at.replace(tzinfo=None) == rows[run_id].expires_at.replace(tzinfo=None)


def test_an_in_list_is_never_longer_than_a_chunk() -> None:
    text, params = in_list("x", list(range(3)))
    assert (text, params) == ("(:x_0, :x_1, :x_2)", {"x_0": 0, "x_1": 1, "x_2": 2})
    with pytest.raises(ValueError):
        in_list("x", list(range(IN_CHUNK + 1)))
