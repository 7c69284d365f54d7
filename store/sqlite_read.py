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


LOW_SPACE = 1 << 20
"""Free bytes below which a disk counts as full: too little for SQLite's -shm index and a transaction."""


def disk_nearly_full(path: Path) -> bool:
    """Has the file system holding the file ``path`` less than ``LOW_SPACE`` left (for this user)?"""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_SPACE


def too_full_to_open_for_writing(path: Path) -> bool:
    """On a full disk SQLite cannot make or grow the -shm index a WAL connection needs, so even a read
    through a read-write connection fails ("disk I/O error"). True when that is so and the -wal holds
    nothing (no committed change lives only there): the file can then be read as it stands
    (immutable), and writes are refused as the disk would refuse them."""
    if not path.exists() or not disk_nearly_full(path) or not wal_is_empty(path):
        return False
    return not _reads_read_write(path)


def wal_is_empty(path: Path) -> bool:
    """Does the -wal file of ``path`` hold nothing (so the file read as it stands is the whole database)?"""
    try:
        return path.with_name(path.name + "-wal").stat().st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _reads_read_write(path: Path) -> bool:
    """Can a read-write connection read the file (its -shm index made or opened)? Only asked on a full disk."""
    try:
        conn = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=rw", uri=True, timeout=0)
    except sqlite3.Error:
        return False
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def open_uri(path: Path, *, read_only: bool = False) -> str:
    """The URI ``path`` is opened by: read-write, or read-only when it cannot be written (or the
    caller asks), and then immutable when its folder cannot hold the -shm file either and the -wal
    holds nothing (nothing can change it there), or the disk is too full to hold the -shm file
    (``too_full_to_open_for_writing``)."""
    quoted = urllib.parse.quote(str(path))
    full = too_full_to_open_for_writing(path)
    if not (read_only or full or cannot_write(path)):
        return f"file:{quoted}?mode=rw"
    # with changes in the -wal, SQLite reads read-only through an existing -shm instead
    immutable = full or (not os.access(path.parent, os.W_OK) and wal_is_empty(path))
    return f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")


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


DRIVER_ERRORS: tuple[type[Exception], ...] = (sqlite3.OperationalError, sqlite3.InternalError)
"""The driver's errors a plain reader can raise that mean the database refused (locked, full, read-only),
for callers that tell those from bugs without importing ``sqlite3`` themselves."""


class SchemaMismatch(Exception):
    """The file is at another schema revision than this chainmark's newest."""

    def __init__(self, current: str, head: str) -> None:
        super().__init__(f"the database is at schema {current}, the newest is {head}")
        self.current, self.head = current, head


def open_reader(url: str) -> sqlite3.Connection | None:
    """A connection to the SQLite file ``url`` names, in a DEFERRED transaction, after the schema check
    the engine makes (``SchemaMismatch`` for an older or newer schema); None when only an engine can open
    it (not a plain file, missing, never migrated, or a history only Alembic reads)."""
    from store.locate import busy_timeout_ms, plain_sqlite_file
    from store.schema_head import plain_head

    path = plain_sqlite_file(url)
    conn = None if path is None else connect(path, busy_timeout_ms())
    if conn is None:
        return None
    try:
        conn.execute("BEGIN DEFERRED")
        current, head = stored_revision(conn), plain_head()
        if current is not None and head is not None and current != head:
            raise SchemaMismatch(current, head)
    except BaseException:
        conn.close()
        raise
    if current is None or head is None:
        conn.close()
        return None
    return conn


def end_read(conn: sqlite3.Connection) -> None:
    """End a reader's transaction and close it."""
    try:
        conn.execute("COMMIT")
    finally:
        conn.close()
