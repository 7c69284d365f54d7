"""Run one SQL text on either kind of reader: a ``sqlite3`` connection (``store.sqlite_read``, the
command line on SQLite) or SQLAlchemy (a connection or an ORM session: PostgreSQL, the TUI).

The text uses named ``:param`` placeholders, which both understand, and only SQL that SQLite and
PostgreSQL read alike, so each query is written once. Values come back as the drivers give them;
``json_value`` and ``timestamp`` turn what differs (JSON read as text, SQLite's timestamp strings)
into what SQLAlchemy's column types returned before.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, overload

IN_CHUNK = 900  # values per ``IN (...)``: far under every SQLite build's parameter limit (999 on old ones)


def rows(reader: Any, sql: str, params: Mapping[str, Any] | None = None) -> Iterable[Sequence[Any]]:
    """The result rows (tuples) of ``sql`` on ``reader``."""
    if isinstance(reader, sqlite3.Connection):
        return reader.execute(sql, params or {})
    import sqlalchemy as sa  # the reader is SQLAlchemy's: already imported

    return reader.execute(sa.text(sql), params or {})


def scalar(reader: Any, sql: str, params: Mapping[str, Any] | None = None) -> Any:
    """The first column of the first row, or None when there is no row."""
    for row in rows(reader, sql, params):
        return row[0]
    return None


def in_list(name: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """``(:name_0, :name_1, …)`` and its parameters, for at most ``IN_CHUNK`` values (see ``chunks``)."""
    if len(values) > IN_CHUNK:
        raise ValueError(f"{len(values)} values in one IN (...): ask in chunks of {IN_CHUNK}")
    params = {f"{name}_{i}": v for i, v in enumerate(values)}
    return "(" + ", ".join(f":{k}" for k in params) + ")", params


def chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for i in range(0, len(values), IN_CHUNK):
        yield values[i : i + IN_CHUNK]


def json_value(text: str | None) -> Any:
    """A JSON column selected as ``CAST(column AS TEXT)``: its text on both databases, decoded."""
    return None if text is None else json.loads(text)


@overload
def timestamp(value: None) -> None: ...
@overload
def timestamp(value: datetime | str) -> datetime: ...
def timestamp(value: datetime | str | None) -> datetime | None:
    """A timestamp column: PostgreSQL's driver gives a datetime, SQLite the text SQLAlchemy stored
    (read back as SQLAlchemy reads it, ``datetime.fromisoformat``: naive, the zone was dropped)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value
