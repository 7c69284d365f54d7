"""store.core_tables names real columns: every table and column that ``run`` and ``score`` read or write
through SQLAlchemy Core exists in the models (the schema) with a type that writes and reads values the
same way."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import SQLModel

import store.models  # noqa: F401  (fills SQLModel.metadata)
from store import core_tables


def _base(column: sa.ColumnElement) -> sa.types.TypeEngine:
    """The type that processes values (SQLModel's AutoString is a TypeDecorator over String)."""
    t = column.type
    return t.impl_instance if isinstance(t, sa.types.TypeDecorator) else t


def test_every_core_column_is_a_model_column_of_the_same_type() -> None:
    for clause in core_tables.TABLES:
        table = SQLModel.metadata.tables[clause.name]
        for column in clause.c:
            model, ours = _base(table.c[column.name]), _base(column)
            assert type(model) is type(ours), (clause.name, column.name, model, ours)
            if isinstance(ours, sa.DateTime):
                assert isinstance(model, sa.DateTime) and model.timezone == ours.timezone, (clause.name, column.name)


def test_every_table_clause_is_listed() -> None:
    clauses = {v.name for v in vars(core_tables).values() if isinstance(v, sa.TableClause)}
    assert clauses == {t.name for t in core_tables.TABLES}
