"""A commit's rows on SQLite through plain ``executemany`` statements instead of Core's.

At -j 256 the run's one database thread writes every trajectory of every harness process, and
Core's per-row parameter handling (compiled parameters, processors looked up per row) was about
half of a commit (bench_harness). Here each value still goes through its column type's own bind
processor (the JSON column's serializer, the timestamps' text, booleans as 0/1), so the stored
values are the ones the Core statements store; ``evaluation/scoring/runner.py`` writes its rows
the same way. Other databases keep the Core statements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa


def _encoded(conn: Any, table: sa.Table, names: Sequence[str], rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    dialect = conn.dialect
    columns: list[list[Any]] = []
    for name in names:
        values = [row[name] for row in rows]
        proc = table.c[name].type._cached_bind_processor(dialect)
        columns.append([proc(v) for v in values] if proc is not None else values)
    return list(zip(*columns))


def insert(conn: Any, table: sa.Table, names: Sequence[str], rows: list[dict[str, Any]]) -> None:
    """``INSERT INTO table (names…)`` of ROWS (dicts keyed by column name), one executemany."""
    quote = conn.dialect.identifier_preparer.quote
    sql = f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) VALUES ({', '.join('?' * len(names))})"
    conn.exec_driver_sql(sql, _encoded(conn, table, names, rows))


def update_by_id(
    conn: Any, table: sa.Table, names: Sequence[str], rows: list[dict[str, Any]], *, keep_if_null: Sequence[str] = ()
) -> None:
    """``UPDATE table SET name = ? … WHERE id = ?`` for each of ROWS (dicts with ``id`` and NAMES);
    a column in KEEP_IF_NULL keeps its stored value where the row has None (``coalesce``)."""
    quote = conn.dialect.identifier_preparer.quote
    sets = ", ".join(f"{quote(n)} = coalesce(?, {quote(n)})" if n in keep_if_null else f"{quote(n)} = ?" for n in names)
    sql = f"UPDATE {quote(table.name)} SET {sets} WHERE {quote('id')} = ?"
    conn.exec_driver_sql(sql, _encoded(conn, table, [*names, "id"], rows))
