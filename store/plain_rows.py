"""Many rows on SQLite through plain ``executemany`` statements instead of Core's.

Core's per-row parameter handling (compiled parameters, processors looked up per row) was about half
of a harness commit at -j 256 and most of writing a scored run's 30,000 checkpoint rows. Here each
value still goes through its column type's own bind processor (the JSON column's serializer, the
timestamps' text, booleans as 0/1), so the stored values are the ones the Core statements store.
Used by the harness's commits and the scoring runner on SQLite; other databases keep Core.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa


def _encoded(
    conn: Any, table: sa.TableClause, names: Sequence[str], rows: list[dict[str, Any]]
) -> list[tuple[Any, ...]]:
    dialect = conn.dialect
    columns: list[list[Any]] = []
    for name in names:
        values = [row[name] for row in rows]
        proc = table.c[name].type._cached_bind_processor(dialect)
        columns.append(_processed(proc, values) if proc is not None else values)
    return list(zip(*columns))


def _processed(proc: Any, values: list[Any]) -> list[Any]:
    """PROC over VALUES, once per run of the same object (a commit's one timestamp, say)."""
    out: list[Any] = []
    last: Any = object()
    done: Any = None
    for v in values:
        if v is not last:
            last, done = v, proc(v)
        out.append(done)
    return out


def insert(conn: Any, table: sa.TableClause, names: Sequence[str], rows: list[dict[str, Any]]) -> None:
    """``INSERT INTO table (names…)`` of ROWS (dicts keyed by column name), one executemany."""
    quote = conn.dialect.identifier_preparer.quote
    sql = f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) VALUES ({', '.join('?' * len(names))})"
    conn.exec_driver_sql(sql, _encoded(conn, table, names, rows))


def update_by_id(
    conn: Any,
    table: sa.TableClause,
    names: Sequence[str],
    rows: list[dict[str, Any]],
    *,
    keep_if_null: Sequence[str] = (),
) -> None:
    """``UPDATE table SET name = ? … WHERE id = ?`` for each of ROWS (dicts with ``id`` and NAMES);
    a column in KEEP_IF_NULL keeps its stored value where the row has None (``coalesce``)."""
    quote = conn.dialect.identifier_preparer.quote
    sets = ", ".join(f"{quote(n)} = coalesce(?, {quote(n)})" if n in keep_if_null else f"{quote(n)} = ?" for n in names)
    sql = f"UPDATE {quote(table.name)} SET {sets} WHERE {quote('id')} = ?"
    conn.exec_driver_sql(sql, _encoded(conn, table, [*names, "id"], rows))
