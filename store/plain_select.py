"""A Core select's rows on SQLite straight from the DBAPI cursor, a batch at a time.

Loading a 10,000-trajectory run for scoring reads ≈ 150,000 rows; Core's result (a ``Row`` made per
row, a cursor strategy between each batch and the caller) cost about as much again as SQLite's own
``fetchmany``. Here the statement is compiled by the connection's dialect and run on the same DBAPI
connection (same transaction), and each column that Core would process (SQLite booleans to ``bool``,
timestamps to ``datetime``) goes through that column type's own result processor, so the values are
the ones Core's rows hold. The reading side of ``store.plain_rows``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from store.dialects import is_sqlite


def applies(conn: Any) -> bool:
    """Whether ``rows`` reads CONN's cursor itself (SQLite); other databases keep Core's results."""
    return is_sqlite(conn)


def rows(conn: Any, stmt: Any, batch: int) -> Iterable[Any] | None:
    """STMT's rows as tuples, fetched BATCH at a time; None when the statement needs what only Core's
    execution does (expanding ``IN`` lists)."""
    got = batches(conn, stmt, batch)
    return None if got is None else chain.from_iterable(got)


def batches(conn: Any, stmt: Any, batch: int) -> Iterator[list[Any]] | None:
    """``rows``, as the lists of up to BATCH rows they are fetched in (for a caller that works by column)."""
    dialect = conn.dialect
    compiled = stmt.compile(dialect=dialect)
    if compiled.post_compile_params or compiled.positiontup is None:
        return None
    params = compiled.construct_params()
    procs = [
        (k, p)
        for k, (_, _, _, type_) in enumerate(compiled._result_columns)
        if (p := type_._cached_result_processor(dialect, None)) is not None
    ]
    cursor = conn.connection.dbapi_connection.cursor()
    cursor.execute(compiled.string, tuple(params[name] for name in compiled.positiontup))
    return _batches(cursor, batch, procs)


def _batches(cursor: Any, size: int, procs: list[tuple[int, Any]]) -> Iterator[list[Any]]:
    try:
        while True:
            got = cursor.fetchmany(size)
            if not got:
                return
            if procs:
                got = _processed(got, procs)
            yield got
    finally:
        cursor.close()


def _processed(batch: list[tuple[Any, ...]], procs: list[tuple[int, Any]]) -> list[tuple[Any, ...]]:
    """The batch with each processed column mapped through its processor: by column (``zip`` there and
    back, ``map`` over the column), not a list and a Python call per row (80,000 events' ``failed``)."""
    columns: list[Any] = list(zip(*batch))
    for k, proc in procs:
        columns[k] = map(proc, columns[k])
    return list(zip(*columns))
