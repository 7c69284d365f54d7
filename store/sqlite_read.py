"""Open a SQLite database for reading through the standard library's ``sqlite3``, as the engine
opens it (``store.db``: the same PRAGMAs and busy timeout), without importing SQLAlchemy (≈ 0.2 s of a
listing's start-up, bench/bench_startup.py). The listings' queries are plain SQL text
(``store.sql``), so they run on this connection or on an engine's, with one text for both.

Only an existing file at a known schema is read this way: a missing or empty file, or one whose
migrations only Alembic can read, is left to the engine, which creates and upgrades it as before.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
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


def read_only_pragmas(timeout_ms: int) -> tuple[str, ...]:
    """The pragmas of a connection to a file that cannot be written (no journal mode to set)."""
    return tuple(p for p in connection_pragmas(timeout_ms) if "journal_mode" not in p and "synchronous" not in p)


def cannot_write(path: Path) -> bool:
    """Is the existing file ``path``, or the folder SQLite keeps its -wal/-shm files in, not writable
    (permissions, a read-only mount)? Such a file is opened read-only: listings still work."""
    return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def open_uri(path: Path) -> str:
    """The URI ``path`` is opened by: read-write, or read-only when it cannot be written, and then
    immutable when its folder cannot hold the -shm file either (nothing can change it there)."""
    quoted = urllib.parse.quote(str(path))
    if not cannot_write(path):
        return f"file:{quoted}?mode=rw"
    return f"file:{quoted}?mode=ro" + ("" if os.access(path.parent, os.W_OK) else "&immutable=1")


def connect(path: Path, timeout_ms: int) -> sqlite3.Connection | None:
    """A connection to the existing file ``path`` in autocommit mode (transactions begun explicitly,
    as the engine does), or None when it cannot be opened (missing: never created here, where it
    would not get the engine's private permissions)."""
    if not path.exists():
        return None
    uri = open_uri(path)
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=timeout_ms / 1000, isolation_level=None)
    except sqlite3.OperationalError:
        return None
    try:
        for pragma in read_only_pragmas(timeout_ms) if "mode=ro" in uri else connection_pragmas(timeout_ms):
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
