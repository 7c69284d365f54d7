"""The questions whose answer depends on the database (SQLite or PostgreSQL), answered in one place.

Everything above the store asks these instead of testing a dialect's name itself, so what differs
between the two databases is decided here (tests/test_store_boundary.py keeps it so).
"""

from __future__ import annotations

from typing import Any

SQLITE = "sqlite"
POSTGRESQL = "postgresql"


def name_of(bind: Any) -> str:
    """The dialect's name of an engine, connection or ORM session (or a name already)."""
    if isinstance(bind, str):
        return bind
    if hasattr(bind, "get_bind"):  # an ORM session
        bind = bind.get_bind()
    return str(bind.dialect.name)


def is_sqlite(bind: Any) -> bool:
    """Whether ``bind`` (engine, connection, session or dialect name) is SQLite's."""
    return name_of(bind) == SQLITE


def is_postgresql(bind: Any) -> bool:
    """Whether ``bind`` is PostgreSQL's: the database with queues, row locks and server-side cursors."""
    return name_of(bind) == POSTGRESQL


def url_is_postgresql(url: str) -> bool:
    """Whether a database URL (``postgresql+psycopg://…``) names PostgreSQL, before any engine is made."""
    return url.startswith(POSTGRESQL)


def needs_row_locks(bind: Any) -> bool:
    """Whether a read-then-write needs ``SELECT … FOR UPDATE``: not on SQLite, where the writer's
    ``BEGIN IMMEDIATE`` already holds the database's one write lock."""
    return not is_sqlite(bind)


def conflict_insert(bind: Any) -> Any:
    """The dialect's ``insert`` construct, which takes ``on_conflict_do_update`` / ``…_do_nothing``;
    None for a database without one. Imported on first use (the PostgreSQL one is not needed on SQLite)."""
    name = name_of(bind)
    if name == SQLITE:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    if name == POSTGRESQL:
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    return None


def contains_ignoring_case(bind: Any, column: Any, pattern: str) -> Any:
    """``column`` matches the LIKE ``pattern`` (``\\`` escapes) ignoring ASCII case: SQLite's LIKE already
    does, far cheaper than ``lower()``; other databases get ILIKE."""
    if is_sqlite(bind):
        return column.like(pattern, escape="\\")
    return column.ilike(pattern, escape="\\")
