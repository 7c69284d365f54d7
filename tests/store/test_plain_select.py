"""``store.plain_select`` hands back the values Core's rows hold (booleans, timestamps, NULLs, raw JSON text),
batch after batch, and leaves statements it cannot run itself to Core."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from store import plain_select

meta = sa.MetaData()
thing = sa.Table(
    "thing",
    meta,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("flag", sa.Boolean),
    sa.Column("at", sa.DateTime(timezone=True)),
    sa.Column("doc", sa.JSON),
    sa.Column("name", sa.String),
)


def _engine() -> sa.Engine:
    engine = sa.create_engine("sqlite://")
    meta.create_all(engine)
    rows = [
        {
            "id": k,
            "flag": [True, False, None][k % 3],
            "at": datetime(2026, 1, 1 + k % 28, 12, k % 60) if k % 4 else None,
        }
        | {"doc": None if k % 5 == 0 else {"k": k, "s": "é"}, "name": f"n{k}" if k % 2 else None}
        for k in range(1, 12)
    ]
    with engine.begin() as c:
        c.execute(sa.insert(thing), rows)
    return engine


def test_rows_are_the_values_core_reads() -> None:
    engine = _engine()
    stmt = (
        sa.select(thing.c.id, thing.c.flag, thing.c.at, sa.type_coerce(thing.c.doc, sa.Text), thing.c.name)
        .where(thing.c.id > 2, thing.c.name.is_not(None) | (thing.c.id < 9))
        .order_by(thing.c.id.desc())
    )
    with engine.connect() as c:
        core = [tuple(r) for r in c.execute(stmt)]
        plain = plain_select.rows(c, stmt, 2)  # batches of 2: several fetches, one partial
        assert plain is not None
        got = [tuple(r) for r in plain]
    assert got == core and len(core) == 8
    assert [tuple(map(type, r)) for r in got] == [tuple(map(type, r)) for r in core]
    assert {type(r[1]) for r in got} == {bool, type(None)} and any(isinstance(r[2], datetime) for r in got)


def test_expanding_in_lists_are_left_to_core() -> None:
    engine = _engine()
    with engine.connect() as c:
        assert plain_select.rows(c, sa.select(thing.c.id).where(thing.c.id.in_([1, 2])), 10) is None
