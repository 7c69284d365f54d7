"""store.score_columns names real columns: every table and column scoring reads or writes exists in the
models (the schema) with a type that reads values back and stores them the same way."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import SQLModel

import store.models  # noqa: F401  (fills SQLModel.metadata)
from store import score_columns


def _base(column: sa.ColumnElement) -> sa.types.TypeEngine:
    """The type that processes values (SQLModel's AutoString is a TypeDecorator over String)."""
    t = column.type
    return t.impl_instance if isinstance(t, sa.types.TypeDecorator) else t


def test_every_scoring_column_is_a_model_column_of_the_same_type() -> None:
    for clause in score_columns.TABLES:
        table = SQLModel.metadata.tables[clause.name]
        for column in clause.c:
            model, ours = _base(table.c[column.name]), _base(column)
            assert type(model) is type(ours), (clause.name, column.name, model, ours)
            if isinstance(ours, sa.DateTime):
                assert isinstance(model, sa.DateTime) and model.timezone == ours.timezone, (clause.name, column.name)
