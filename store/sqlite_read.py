"""Open a SQLite database for reading through the standard library's ``sqlite3``, as the engine
opens it (``store.db``: the same PRAGMAs and busy timeout), without importing SQLAlchemy (≈ 0.2 s of a
listing's start-up, bench/bench_startup.py). The listings' queries are plain SQL text
(``store.sql``), so they run on this connection or on an engine's, with one text for both.

Only an existing file at a known schema is read this way: a missing or empty file, or one whose
migrations only Alembic can read, is left to the engine, which creates and upgrades it as before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store.schema_head import one_revision


def connection_pragmas(timeout_ms: int) -> tuple[str, ...]:
    """What every SQLite connection runs first, the engine's and the readers' alike."""
    return (
        f"PRAGMA busy_timeout={int(timeout_ms)}",
        "PRAGMA journal_mode=WAL",
        "PRAGMA foreign_keys=ON",
        "PRAGMA synchronous=NORMAL",
    )


def connect(path: Path, timeout_ms: int) -> sqlite3.Connection | None:
    """A connection to the existing file ``path`` in autocommit mode (transactions begun explicitly,
    as the engine does), or None when it cannot be opened (missing: never created here, where it
    would not get the engine's private permissions)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=timeout_ms / 1000, isolation_level=None)
    except sqlite3.OperationalError:
        return None
    try:
        for pragma in connection_pragmas(timeout_ms):
            conn.execute(pragma)
    except BaseException:
        conn.close()
        raise
    return conn


def stored_revision(conn: sqlite3.Connection) -> str | None:
    """The schema revision the database says it is at (None: never migrated)."""
    found = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'")
    if not found.fetchone()[0]:
        return None
    return one_revision([v for (v,) in conn.execute("SELECT version_num FROM alembic_version")])
