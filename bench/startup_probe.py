"""Run ``chainmark ARGS…`` and note when the command starts its own work: the first SQL statement it
sends that is not part of opening the database (the schema check's ``alembic_version`` queries,
SQLite's ``PRAGMA``s and ``BEGIN``s, PostgreSQL's catalog look-ups). Everything before it — the
interpreter, the CLI, the command's module, the store, the engine and the schema check — is start-up.

    python bench/startup_probe.py FIGURES_FILE [--stop] chainmark-args…

At that statement it writes ``cpu_s epoch_s statement`` to FIGURES_FILE (process CPU since exec, the
wall clock, the statement's first line); with ``--stop`` it then exits at once (status 0), so a long
command (``run``, ``score``) needs no model server or big data to have its start-up timed.

The listener is put on SQLAlchemy's ``Engine`` class before the CLI starts, so SQLAlchemy is
imported a little earlier than the command would import it; every command that reaches a statement
imports it anyway, so the time to the statement is the same.
"""

from __future__ import annotations

import os
import sys
import time

_NOT_OWN = ("pragma", "begin", "commit", "rollback", "select pg_catalog", "show ", "select current_schema")


def _is_opening(statement: str) -> bool:
    text = statement.lstrip().lower()
    return text.startswith(_NOT_OWN) or "alembic_version" in text or "pg_catalog" in text


def main() -> None:
    figures, args = sys.argv[1], sys.argv[2:]
    stop = bool(args) and args[0] == "--stop"
    if stop:
        args = args[1:]
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    seen = False

    @event.listens_for(Engine, "before_cursor_execute")
    def _first_own(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        nonlocal seen
        if seen or _is_opening(statement):
            return
        seen = True
        cpu, now = time.process_time(), time.time()
        first_line = " ".join(statement.split())[:70]
        with open(figures, "w", encoding="utf-8") as out:
            out.write(f"{cpu} {now} {first_line}")
        if stop:
            os._exit(0)

    sys.argv = ["chainmark", *args]
    from tui.cli import main as chainmark

    chainmark()


if __name__ == "__main__":
    main()
