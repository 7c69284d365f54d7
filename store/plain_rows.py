"""Many rows on SQLite through plain ``executemany`` statements instead of Core's.

Core's per-row parameter handling (compiled parameters, processors looked up per row) was about half
of a harness commit at -j 256 and most of writing a scored run's 30,000 checkpoint rows. Here each
value still goes through its column type's own bind processor (the JSON column's serializer, the
timestamps' text, booleans as 0/1), so the stored values are the ones the Core statements store.
Used by the harness's commits and the scoring runner on SQLite; other databases keep Core.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from json import encoder as json_encoder
from typing import Any

import sqlalchemy as sa

from store.dialects import is_sqlite
from store.speedups import enabled


def applies(conn: Any) -> bool:
    """Whether these plain statements serve CONN (SQLite, unless switched off); other databases keep Core's."""
    return is_sqlite(conn) and enabled("plain_executemany")


def stores_json_dumps(conn: Any) -> bool:
    """Whether CONN's JSON columns store ``json.dumps``'s text (SQLite with the default serializer), so
    JSON text a caller made with ``json.dumps`` can go to the driver as it is (``insert_columns``)."""
    return applies(conn) and getattr(conn.dialect, "_json_serializer", None) in (None, json.dumps)


def insert_columns(conn: Any, table: sa.TableClause, names: Sequence[str], columns: Sequence[Sequence[Any]]) -> None:
    """``INSERT INTO table (names…)`` of values the caller already encoded for the driver, given one
    sequence per column of NAMES (row k: each column's k-th value), one executemany."""
    quote = conn.dialect.identifier_preparer.quote
    sql = f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) VALUES ({', '.join('?' * len(names))})"
    conn.exec_driver_sql(sql, list(zip(*columns)))


def max_id(conn: Any, table: sa.TableClause) -> int:
    """The largest ``id`` in TABLE (0 when it is empty)."""
    quote = conn.dialect.identifier_preparer.quote
    return int(conn.exec_driver_sql(f"SELECT max({quote('id')}) FROM {quote(table.name)}").scalar() or 0)


def _encoded(
    conn: Any, table: sa.TableClause, names: Sequence[str], rows: list[dict[str, Any]]
) -> list[tuple[Any, ...]]:
    return _encoded_columns(conn, table, names, [[row[name] for row in rows] for name in names])


def _encoded_columns(
    conn: Any, table: sa.TableClause, names: Sequence[str], values_by_name: Sequence[Sequence[Any]]
) -> list[tuple[Any, ...]]:
    """The statement's parameter rows from one sequence of values per column of NAMES."""
    dialect = conn.dialect
    columns: list[Sequence[Any]] = []
    for name, values in zip(names, values_by_name, strict=True):
        column_type = table.c[name].type
        proc = column_type._cached_bind_processor(dialect)
        if proc is not None and type(column_type) is sa.JSON and dialect._json_serializer is None:
            proc = _JsonDumps(proc)
        columns.append(_processed(proc, values) if proc is not None else values)
    return list(zip(*columns))


class _JsonDumps:
    """A JSON column's bind processor with ``json.dumps``'s own C encoder made once, not once per value:
    the same text for every dict and list (json.dumps builds exactly this encoder for each call);
    anything else, and any value the encoder refuses, goes through the column's processor."""

    def __init__(self, proc: Any):
        self.proc = proc
        self.encoder = self._make()

    @staticmethod
    def _make() -> Any:
        enc: Any = getattr(json, "_default_encoder")  # what json.dumps uses when called with no options
        make: Any = getattr(json_encoder, "c_make_encoder", None)
        if make is None or enc.indent is not None:
            return None
        return make(
            {} if enc.check_circular else None,
            enc.default,
            json_encoder.encode_basestring_ascii if enc.ensure_ascii else json_encoder.encode_basestring,
            enc.indent,
            enc.key_separator,
            enc.item_separator,
            enc.sort_keys,
            enc.skipkeys,
            enc.allow_nan,
        )

    def __call__(self, value: Any) -> Any:
        if self.encoder is not None and type(value) in (dict, list):
            try:
                return "".join(self.encoder(value, 0))
            except Exception:  # a circular reference, an unserialisable value: the processor says so
                self.encoder = self._make()  # its circular-reference marks may be left set
        return self.proc(value)


def _processed(proc: Any, values: Sequence[Any]) -> list[Any]:
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


def upsert(
    conn: Any,
    table: sa.Table,
    names: Sequence[str],
    rows: list[dict[str, Any]],
    *,
    conflict: Sequence[str],
    update: Sequence[str],
) -> None:
    """``INSERT … ON CONFLICT (conflict…) DO UPDATE SET`` the UPDATE columns of ROWS, one executemany: a
    row whose CONFLICT columns match a stored one (a unique constraint) updates it in place (its id and
    the other columns stay); the others are inserted in order, taking the ids a plain insert would."""
    upsert_columns(
        conn, table, names, [[row[name] for row in rows] for name in names], conflict=conflict, update=update
    )


def upsert_columns(
    conn: Any,
    table: sa.Table,
    names: Sequence[str],
    columns: Sequence[Sequence[Any]],
    *,
    conflict: Sequence[str],
    update: Sequence[str],
    keep_equal: bool = False,
) -> None:
    """``upsert`` of rows given as one sequence of values per column of NAMES (row k: each column's k-th
    value), for a caller that has its values by column: no dict per row. KEEP_EQUAL: a stored row whose
    UPDATE columns already hold the new values is left as it is (the same row either way), so re-writing
    unchanged rows dirties no page (no WAL growth, no checkpoint at the commit)."""
    quote = conn.dialect.identifier_preparer.quote
    sets = ", ".join(f"{quote(n)} = excluded.{quote(n)}" for n in update)
    sql = (
        f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) VALUES ({', '.join('?' * len(names))}) "
        f"ON CONFLICT ({', '.join(map(quote, conflict))}) DO UPDATE SET {sets}"
    )
    if keep_equal:
        sql += " WHERE " + " OR ".join(f"{quote(n)} IS NOT excluded.{quote(n)}" for n in update)
    conn.exec_driver_sql(sql, _encoded_columns(conn, table, names, columns))
