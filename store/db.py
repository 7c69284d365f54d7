"""One engine factory keyed by URL, and the unit-of-work session helper.

SQLite gets WAL, ``busy_timeout``, foreign keys and ``BEGIN IMMEDIATE`` for every transaction: a
deferred transaction that reads first cannot upgrade to a writer once another writer committed, and
SQLite then fails at once with "database is locked" instead of waiting (measured: 280/400 lost
without it, 0 with it). PostgreSQL URLs (``postgresql+psycopg://…``) get none of these hooks.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from store.locate import (  # noqa: F401  (re-exported: where the database is, read without SQLAlchemy)
    BUSY_TIMEOUT_MS,
    DEFAULT_DB,
    ENV_BUSY_TIMEOUT,
    ENV_DB,
    busy_timeout_ms,
    resolve_url,
)
from store.acting import acting_user  # noqa: F401  (re-exported: who the audit names)
from store.sqlite_read import (
    cannot_write,
    connection_pragmas,
    open_uri,
    read_only_pragmas,
    too_full_to_open_for_writing,
)

if TYPE_CHECKING:  # the ORM loads with the first session, not with the engine (store/__init__.py)
    from sqlmodel import Session


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL, or None for other databases or memory."""
    u = sa.engine.make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    if _uri_filename(u):  # sqlite:///file:/path/c.db?mode=ro&uri=true names /path/c.db
        path = urllib.parse.unquote(urllib.parse.urlsplit(u.database).path)
        return Path(path) if path and path != ":memory:" else None
    return Path(u.database)


def _uri_filename(u: sa.engine.URL) -> bool:
    return str(u.query.get("uri", "")).lower() in ("true", "1") and bool(u.database and u.database.startswith("file:"))


def asks_read_only(url: str) -> bool:
    """Does a SQLite URL open its file read-only (``?mode=ro&uri=true``, or ``immutable=1``)?"""
    u = sa.engine.make_url(url)
    return _uri_filename(u) and (u.query.get("mode") == "ro" or str(u.query.get("immutable")) == "1")


def make_engine(db: str | os.PathLike[str] | None = None, *, echo: bool = False) -> Engine:
    """Create the engine for a path or URL, with the SQLite rules attached when it is SQLite."""
    url = resolve_url(db)
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        asked_read_only = path is not None and asks_read_only(url)
        if path is not None and not asked_read_only:
            _create_private(path)
        timeout = busy_timeout_ms()
        # an unwritable file or folder, a full disk: reads work; a write fails "read-only" or "full"
        if path is not None and (asked_read_only or cannot_write(path) or too_full_to_open_for_writing(path)):
            engine = _read_only_engine(path, timeout, echo)
        else:
            engine = sa.create_engine(url, echo=echo, connect_args={"timeout": timeout / 1000})
            _attach_sqlite_rules(engine, timeout)
    else:
        engine = sa.create_engine(url, echo=echo, pool_pre_ping=True)
    return engine


def _create_private(path: Path) -> None:
    """A new SQLite file is created empty with mode 0600 (its folder 0700 if we make it), so the
    database and the -wal/-shm files SQLite derives from it are the owner's alone."""
    if path.exists():
        return
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # created meanwhile by another process: it made its own choice
        pass


def _read_only_engine(path: Path, timeout_ms: int, echo: bool) -> Engine:
    """An engine on a file that cannot be written: opened read-only, every transaction DEFERRED."""
    import sqlite3

    uri = open_uri(path, read_only=True)

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(uri, uri=True, timeout=timeout_ms / 1000, check_same_thread=False)

    # the URL names the file (the creator connects): what finds its blobs folder, logs and locks by it
    engine = sa.create_engine(f"sqlite:///{path}", echo=echo, creator=connect, poolclass=sa.pool.NullPool)
    _attach_sqlite_rules(engine, timeout_ms, read_only_pragmas(timeout_ms), default_begin="DEFERRED")
    return engine


def _attach_sqlite_rules(
    engine: Engine,
    timeout_ms: int = BUSY_TIMEOUT_MS,
    pragmas: tuple[str, ...] | None = None,
    default_begin: str = "IMMEDIATE",
) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):  # type: ignore[no-untyped-def]
        dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
        cur = dbapi_conn.cursor()
        for pragma in pragmas if pragmas is not None else connection_pragmas(timeout_ms):
            cur.execute(pragma)
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # type: ignore[no-untyped-def]
        mode = conn.get_execution_options().get("sqlite_begin", default_begin)
        conn.exec_driver_sql(f"BEGIN {mode}" if mode else "BEGIN")


def read_only(engine: Engine) -> Engine:
    """A view of the engine whose transactions begin DEFERRED, so readers don't queue behind writers."""
    return engine.execution_options(sqlite_begin="DEFERRED")


@contextmanager
def session_scope(engine: Engine, actor: str | None = None) -> Iterator[Session]:
    """One short transaction: commit on success, roll back on any error.

    ``actor`` names who is acting; audit events written in this session carry it.
    """
    from sqlmodel import Session

    with _committed(Session(engine, expire_on_commit=False), actor) as session:
        yield session


@contextmanager
def _committed(session: Session, actor: str | None) -> Iterator[Session]:
    """SESSION acting for ACTOR: committed when the block ends, rolled back if it raises, closed either way."""
    session.info["actor"] = acting_user(actor)
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def optional_write_scope(engine: Engine, actor: str | None = None) -> Iterator[Session]:
    """``session_scope`` for a write a reader can do without (built-in rows stored on first use): on
    SQLite it does not wait out another writer's lock, so a report never stalls behind a running
    command for the busy timeout; the caller decides what a refused write means (``write_failure``)."""
    if engine.dialect.name != "sqlite":
        with session_scope(engine, actor) as session:
            yield session
        return
    from sqlmodel import Session

    with engine.connect() as conn:
        driver = conn.connection.driver_connection
        assert driver is not None  # a checked-out connection always has one
        driver.execute("PRAGMA busy_timeout=0")
        try:
            with _committed(Session(conn, expire_on_commit=False), actor) as session:
                yield session
        finally:
            driver.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")


@contextmanager
def read_scope(engine: Engine) -> Iterator[Connection]:
    """One short read-only transaction (DEFERRED on SQLite, as ``read_only``) on a plain connection,
    for queries written in SQLAlchemy Core: no ORM session, so no SQLModel classes to build."""
    with read_only(engine).connect() as conn, conn.begin():
        yield conn
