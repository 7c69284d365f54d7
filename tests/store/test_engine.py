"""The SQLite rules of the engine factory, and writers that never see "database is locked"."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import select

from store import make_engine, resolve_url, session_scope
from store.migrate import upgrade
from bench.bench_team import processes
from store.models import Annotator, AuditEvent


def test_resolve_url_turns_paths_into_sqlite_urls_and_keeps_urls(tmp_path, monkeypatch):
    assert resolve_url(tmp_path / "x.db") == f"sqlite:///{tmp_path / 'x.db'}"
    assert resolve_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    monkeypatch.setenv("CHAINMARK_DB", str(tmp_path / "env.db"))
    assert resolve_url(None).endswith("env.db")
    monkeypatch.delenv("CHAINMARK_DB")
    assert resolve_url(None).endswith("/chainmark.db")


def test_sqlite_connections_get_wal_busy_timeout_and_foreign_keys(engine):
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


def test_foreign_keys_are_enforced(engine):
    from store.models import Task

    with pytest.raises(sa.exc.IntegrityError):
        with session_scope(engine) as s:
            s.add(Task(benchmark_id=999, source_id="x", query="q"))


def test_transactions_begin_immediate(engine):
    seen: list[str] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def spy(conn, cursor, statement, *args):  # noqa: ANN001
        seen.append(statement)

    with session_scope(engine) as s:
        s.exec(select(Annotator)).all()
    assert "BEGIN IMMEDIATE" in seen


def _writer(path: str, worker: int, n: int, errors: "mp.Queue[str]") -> None:
    eng = make_engine(path)
    for i in range(n):
        try:
            with session_scope(eng, actor=f"w{worker}") as s:
                # Read first, then write: the pattern that fails under deferred BEGIN.
                count = len(s.exec(select(Annotator.id)).all())
                s.add(Annotator(name=f"w{worker}-{i}-{count}"))
        except Exception as exc:  # pragma: no cover - reported to the parent
            errors.put(f"{type(exc).__name__}: {exc}")
    eng.dispose()


def test_eight_processes_writing_concurrently_lose_nothing(tmp_path: Path):
    path = str(tmp_path / "concurrent.db")
    upgrade(make_engine(path))
    ctx = processes()  # separate processes, forked from one that imported chainmark once
    errors: "mp.Queue[str]" = ctx.Queue()
    per_worker = 25
    procs = [ctx.Process(target=_writer, args=(path, w, per_worker, errors)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    messages = []
    while not errors.empty():
        messages.append(errors.get())
    assert messages == []
    assert all(p.exitcode == 0 for p in procs)
    with session_scope(make_engine(path)) as s:
        assert len(s.exec(select(Annotator)).all()) == 8 * per_worker
        assert s.exec(select(AuditEvent)).all() == []  # annotators are not audited entities
