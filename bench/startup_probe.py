"""Run ``chainmark ARGS…`` and note when the command starts its own work: the first SQL statement it
sends that is not part of opening the database (the schema check's ``alembic_version`` queries,
SQLite's ``PRAGMA``s and ``BEGIN``s, PostgreSQL's catalog look-ups). Everything before it — the
interpreter, the CLI, the command's module, the store, the engine and the schema check — is start-up.

    python bench/startup_probe.py FIGURES_FILE [--stop] chainmark-args…

At that statement it writes ``cpu_s epoch_s statement`` to FIGURES_FILE (process CPU since exec, the
wall clock, the statement's first line); with ``--stop`` it then exits at once (status 0), so a long
command (``run``, ``score``) needs no model server or big data to have its start-up timed.

Two listeners see the statements, neither importing anything heavy the command would not: every
connection opened through ``sqlite3.connect`` gets a trace callback (the wrapper costs the ``sqlite3``
import, ≈ 2 ms, which a command on SQLite pays anyway): the listings read SQLite that way, without
SQLAlchemy. SQLAlchemy's ``Engine`` class gets a ``before_cursor_execute`` listener the moment the
command imports SQLAlchemy: every other command, on either database (SQLAlchemy opens SQLite through
``sqlite3.dbapi2.connect``, which stays unwrapped, so no statement is seen twice).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import time

_NOT_OWN = ("pragma", "begin", "commit", "rollback", "select pg_catalog", "show ", "select current_schema")


def _is_opening(statement: str) -> bool:
    text = statement.lstrip().lower()
    return text.startswith(_NOT_OWN) or "alembic_version" in text or "pg_catalog" in text


class _Recorder:
    """Writes the figures at the first own statement (whichever listener sees it first)."""

    def __init__(self, figures: str, stop: bool) -> None:
        self.figures, self.stop, self.seen = figures, stop, False

    def __call__(self, statement: str) -> None:
        if self.seen or _is_opening(statement):
            return
        self.seen = True
        cpu, now = time.process_time(), time.time()
        first_line = " ".join(statement.split())[:70]
        with open(self.figures, "w", encoding="utf-8") as out:
            out.write(f"{cpu} {now} {first_line}")
        if self.stop:
            os._exit(0)


def _trace_sqlite(record: _Recorder) -> None:
    """Every ``sqlite3`` connection opened from now on calls ``record`` with each statement it runs."""
    import sqlite3

    connect = sqlite3.connect

    def traced(*args, **kwargs):  # type: ignore[no-untyped-def]
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(record)
        return conn

    sqlite3.connect = traced


class _OnSqlalchemyImport(importlib.abc.MetaPathFinder):
    """Puts the listener on SQLAlchemy's ``Engine`` right after the command imports ``sqlalchemy``."""

    def __init__(self, record: _Recorder) -> None:
        self.record = record

    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != "sqlalchemy":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module):  # type: ignore[no-untyped-def]
            run_module(module)
            from sqlalchemy import event
            from sqlalchemy.engine import Engine

            @event.listens_for(Engine, "before_cursor_execute")
            def _first_own(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
                self.record(statement)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def main() -> None:
    figures, args = sys.argv[1], sys.argv[2:]
    stop = bool(args) and args[0] == "--stop"
    if stop:
        args = args[1:]
    record = _Recorder(figures, stop)
    _trace_sqlite(record)
    sys.meta_path.insert(0, _OnSqlalchemyImport(record))

    sys.argv = ["chainmark", *args]
    from tui.cli import main as chainmark

    chainmark()


if __name__ == "__main__":
    main()
