"""Bulk inserts for imports: one executemany per table, new ids read back by natural key, and an audit
'create' event for every inserted row of an audited table.

Everything goes through SQLAlchemy Core over ``store.core_tables`` (an import never builds the ORM to
create rows), so the audit rows are written here, with the content the ORM flush hook
(``store.audit``) gives: the row's columns and its id. On SQLite the rows go to the driver as tuples,
each value through its column's own bind processor (a JSON column: ``json.dumps``), and an audit row's
JSON is assembled from those same texts, so every value is serialized once. Other databases take the
plain Core path.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from datetime import datetime
from operator import itemgetter
from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from store import plain_rows
from store.core_tables import Reader, auditevent, connection_of

CHUNK = 500

NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    "task": ("benchmark_id", "source_id"),
    "referencestep": ("task_id", "ordinal"),
    "checkpoint": ("task_id", "key"),
    "orderingconstraint": ("task_id", "key"),
    "document": ("task_id", "ordinal"),
    "asset": ("sha256",),
    "trajectory": ("run_id", "task_id"),
    "event": ("trajectory_id", "ordinal"),
}

# Columns an audit event shows as a note instead of their value: the verbatim source record lives on the
# task row itself, the trail only says where it came from.
AUDIT_NOTES = {"source_record": "<imported source record>"}


class JsonText(str):
    """A JSON column value already serialized with ``json.dumps`` (what the column itself would store).

    The SQLite path stores the text as is instead of serializing ``value`` again; other databases get
    ``value``. Lets a caller that needed the text anyway (a fingerprint) hand it over.
    """

    value: Any

    def __new__(cls, value: Any, text: str) -> JsonText:
        self = super().__new__(cls, text)
        self.value = value
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its text alone (half the bytes of a source record, and a text unpickles far faster
        than the objects); the value is decoded again only if something asks for it."""
        return (_unpickle_json_text, (str.__str__(self),))

    def __getattr__(self, name: str) -> Any:
        if name != "value":
            raise AttributeError(name)
        self.value = json.loads(str.__str__(self))  # the text is json.dumps of the value: the same value
        return self.value


def _unpickle_json_text(text: str) -> JsonText:
    return str.__new__(JsonText, text)


_MISSING = object()
_quote = encode_basestring_ascii


def _fast_path(conn: Connection) -> bool:
    """SQLite with the default JSON serializer: JSON texts made here are what the column would store."""
    return plain_rows.stores_json_dumps(conn)


def _each_once(values: list[Any], encode: Callable[[Any], Any]) -> list[Any]:
    """``[encode(v) for v in values]``, a value repeated by identity (the import's ``now``) encoded once."""
    out = []
    last, last_out = _MISSING, None
    for v in values:
        if v is not last:
            last, last_out = v, encode(v)
        out.append(last_out)
    return out


def make_dumps(*, ensure_ascii: bool = True, default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """``json.dumps`` with these settings (the rest default), without building a new C encoder on every
    call (that set-up cost more than encoding the small values an import stores by the hundred thousand).
    Not for sharing between threads."""
    enc = json.JSONEncoder(ensure_ascii=ensure_ascii, default=default)
    if c_make_encoder is None:
        return enc.encode
    markers: dict[int, Any] = {}  # the circular-reference check; left filled by a failed encode
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    make = c_make_encoder(markers, enc.default, quote, None, enc.key_separator, enc.item_separator, False, False, True)

    def dumps(v: Any) -> str:
        try:
            return "".join(make(v, 0))
        except BaseException:
            markers.clear()
            raise

    return dumps


def _column_encoder(column: sa.Column, dialect: Any) -> Callable[[Any], Any] | None:
    proc = column.type._cached_bind_processor(dialect)
    if not isinstance(column.type, sa.JSON):
        return proc
    # (Only called on the fast path: SQLite, json.dumps as the serializer, no string processing.)
    # One encoder per column and insert: never shared between threads.
    _dumps = make_dumps()
    null = proc(None) if proc else None  # the same for every row: worked out once

    def encode(v: Any) -> Any:
        tv = type(v)
        if tv is dict or tv is list:  # what the column's processor does for these: json.dumps
            return _dumps(v)
        if v is None:
            return null
        if tv is JsonText:
            return str.__str__(v)
        return proc(v) if proc else v

    return encode


def _sqlite_columns(conn: Connection, table: Any, cols: list[str], rows: list[dict[str, Any]]) -> list[Any]:
    """The rows' values column by column, encoded for the driver (rows split into columns in C)."""
    dialect = conn.dialect
    out: list[Any] = list(zip(*map(itemgetter(*cols), rows))) if len(cols) > 1 else [[r[cols[0]] for r in rows]]
    for i, c in enumerate(cols):
        encode = _column_encoder(table.c[c], dialect)
        if encode is None:
            continue
        # A JSON value is seldom repeated; a timestamp column mostly holds the import's one ``now``.
        out[i] = list(map(encode, out[i])) if isinstance(table.c[c].type, sa.JSON) else _each_once(out[i], encode)
    return out


def _plain(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for a Core insert: pre-serialized JSON handed back as its value."""
    return [{k: v.value if type(v) is JsonText else v for k, v in r.items()} for r in rows]


def insert_many(reader: Reader, table: Any, rows: list[dict[str, Any]]) -> None:
    """One executemany into ``table`` (a Core table or table clause naming every column the rows
    have). On SQLite as tuples through each column's bind processor (the same stored values as a
    Core insert, without its per-row parameter assembly, which dominated a 10,000-task import);
    other databases use a plain Core insert."""
    if not rows:
        return
    conn = connection_of(reader)
    if not _fast_path(conn):
        conn.execute(table.insert(), _plain(rows))
        return
    cols = list(rows[0])
    plain_rows.insert_columns(conn, table, cols, _sqlite_columns(conn, table, cols, rows))


def ids_by_natural_key(reader: Reader, table: Any, rows: list[dict[str, Any]]) -> list[int]:
    """Ids of just-inserted rows, in row order, looked up by each row's natural key.

    (RETURNING with guaranteed row order makes SQLAlchemy send SQLite one statement per row, which is
    10× slower; the natural keys are unique among the rows of one import, and new.)
    """
    keys = NATURAL_KEYS[table.name]
    first = table.c[keys[0]]
    found: dict[tuple[Any, ...], int] = {}
    distinct = list(dict.fromkeys(r[keys[0]] for r in rows))
    for i in range(0, len(distinct), CHUNK):
        chunk = distinct[i : i + CHUNK]
        stmt = sa.select(table.c.id, *(table.c[k] for k in keys)).where(first.in_(chunk))
        for row in connection_of(reader).execute(stmt):
            found[tuple(row[1:])] = row[0]
    return [found[tuple(r[k] for k in keys)] for r in rows]


def _sequential_ids(conn: Connection, table: Any, before: int, count: int) -> list[int] | None:
    """On SQLite, the ids of ``count`` rows just inserted one after another into a table whose largest
    id was ``before``: each new row took the largest id plus one, so if the largest is now exactly
    ``before + count`` they are ``before + 1 …`` in insertion order. None when that does not hold (a
    table at the top of the id range gives random ids): the caller looks them up instead."""
    after = plain_rows.max_id(conn, table)
    return list(range(before + 1, after + 1)) if after - before == count else None


def insert_returning_ids(reader: Reader, table: Any, rows: list[dict[str, Any]]) -> list[int]:
    """Insert with one executemany, then the new ids (on SQLite by counting, else by natural key)."""
    if not rows:
        return []
    conn = connection_of(reader)
    if not _fast_path(conn) or "id" in rows[0]:
        insert_many(conn, table, rows)
        return ids_by_natural_key(conn, table, rows)
    before = plain_rows.max_id(conn, table)
    insert_many(conn, table, rows)
    return _sequential_ids(conn, table, before, len(rows)) or ids_by_natural_key(conn, table, rows)


def insert_audited(
    reader: Reader,
    table: Any,
    rows: list[dict[str, Any]],
    entity: str,
    actor: str,
    now: datetime,
    *,
    audit_table: sa.Table | None = None,
) -> list[int]:
    """Insert rows and one audit 'create' event per row; returns the new ids in row order.

    ``audit_table``: write the events there instead (an ``audit_stage``, copied over later)."""
    if not rows:
        return []
    conn = connection_of(reader)
    audit = auditevent if audit_table is None else audit_table
    if not _fast_path(conn):
        ids = insert_returning_ids(conn, table, rows)
        events = [
            _event(actor, entity, rid, {"id": rid, **{k: _audit_value(k, v) for k, v in row.items()}}, now)
            for row, rid in zip(_plain(rows), ids)
        ]
        insert_many(conn, audit, events)
        return ids
    cols = list(rows[0])
    columns = _sqlite_columns(conn, table, cols, rows)
    before = plain_rows.max_id(conn, table)
    plain_rows.insert_columns(conn, table, cols, columns)
    ids = ("id" not in rows[0] and _sequential_ids(conn, table, before, len(rows))) or ids_by_natural_key(
        conn, table, rows
    )
    afters = _audit_texts(table, cols, rows, columns, ids)
    # The text goes to the column as is (this is the SQLite path), so no dict of it is ever needed.
    events = [_event(actor, entity, rid, JsonText(None, after), now) for rid, after in zip(ids, afters)]
    insert_many(conn, audit, events)
    return ids


_AUDIT_COLUMNS = [c.name for c in auditevent.c if c.name != "id"]


def audit_stage(reader: Reader, name: str) -> sa.Table:
    """An empty temporary table shaped like the audit table (its own ids keep the order events came in),
    for audit events that must follow others not written yet."""
    cols = [sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)]
    cols += [sa.Column(c.name, c.type) for c in auditevent.c if c.name != "id"]
    table = sa.Table(name, sa.MetaData(), *cols, prefixes=["TEMPORARY"])
    conn = connection_of(reader)
    table.drop(
        conn, checkfirst=True
    )  # left by an import on this connection that failed (DDL rolled back too, normally)
    table.create(conn)
    return table


def copy_audit_stage(reader: Reader, stage: sa.Table) -> None:
    """Append the staged events to the audit table in the order they were staged; drop the stage."""
    conn = connection_of(reader)
    select = sa.select(*(stage.c[c] for c in _AUDIT_COLUMNS)).order_by(stage.c.id)
    conn.execute(auditevent.insert().from_select(_AUDIT_COLUMNS, select))
    stage.drop(conn)


def _event(actor: str, entity: str, rid: int, after: Any, now: datetime) -> dict[str, Any]:
    return {
        "actor": actor,
        "action": "create",
        "entity": entity,
        "entity_id": rid,
        "before": None,
        "after": after,
        "created_at": now,
    }


def _audit_value(key: str, value: Any) -> Any:
    if key in AUDIT_NOTES:
        return AUDIT_NOTES[key]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _audit_texts(
    table: Any, cols: list[str], rows: list[dict[str, Any]], columns: list[list[Any]], ids: list[int]
) -> list[str]:
    """``json.dumps({"id": id, **row})`` of every row (notes and ISO timestamps as ``_audit_value``
    gives them), built from the texts already made for the insert instead of serializing again."""
    # One %-template per table: the keys and notes are literal, every row fills in its id and texts.
    template = ['{"id": %d']
    texts = []
    for c, values in zip(cols, columns):
        key = json.dumps(c) + ": "
        if c in AUDIT_NOTES:
            template.append(", " + (key + json.dumps(AUDIT_NOTES[c])).replace("%", "%%"))
            continue
        template.append(", " + key.replace("%", "%%") + "%s")
        if isinstance(table.c[c].type, sa.JSON):
            texts.append(values)
        else:
            texts.append(_each_once(list(map(itemgetter(c), rows)), _scalar_json))
    fmt = "".join(template) + "}"
    return [fmt % parts for parts in zip(ids, *texts)]


def _scalar_json(value: Any) -> str:
    """``json.dumps`` of a plain column value (datetimes as ISO text); the common types tested first."""
    tv = type(value)
    if tv is str:
        return _quote(value)  # what json.dumps does with a str
    if tv is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, datetime):
        return _quote(value.isoformat())
    return json.dumps(value)
