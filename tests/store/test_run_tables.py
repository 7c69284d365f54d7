"""store.run_tables names real columns: every table and column a run reads or writes through
SQLAlchemy Core exists in the models (the schema) with a type that writes and reads values the same
way."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import SQLModel

import store.models  # noqa: F401  (fills SQLModel.metadata)
from store import run_tables


def _kind(column: sa.ColumnElement) -> type:
    """What the column's values are read back as (a TypeDecorator, SQLModel's AutoString, reads as its base)."""
    t = column.type
    return (t.impl_instance if isinstance(t, sa.types.TypeDecorator) else t).python_type


def test_every_column_a_run_uses_is_a_model_column_of_the_same_kind() -> None:
    for clause in run_tables.TABLES:
        table = SQLModel.metadata.tables[clause.name]
        for column in clause.c:
            model = table.c[column.name]
            assert _kind(model) is _kind(column), (clause.name, column.name)
            if isinstance(column.type, sa.DateTime):
                assert isinstance(model.type, sa.DateTime), (clause.name, column.name)
                assert model.type.timezone == column.type.timezone, (clause.name, column.name)
