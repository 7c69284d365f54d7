"""store.columns and store.run_tables name real columns: every table and column the Core listings and
a run read or write exists in the models (the schema) with a type that reads values back the same way."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel

import store.models  # noqa: F401  (fills SQLModel.metadata)
from store import columns, run_tables


def _kind(column: sa.ColumnElement) -> type:
    """What the column's values are read back as (a TypeDecorator, SQLModel's AutoString, reads as its base)."""
    t = column.type
    return (t.impl_instance if isinstance(t, sa.types.TypeDecorator) else t).python_type


@pytest.mark.parametrize("clauses", [columns.TABLES, run_tables.TABLES], ids=["listings", "run"])
def test_every_listed_column_is_a_model_column_of_the_same_kind(clauses: tuple[sa.TableClause, ...]) -> None:
    for clause in clauses:
        table = SQLModel.metadata.tables[clause.name]
        for column in clause.c:
            model = table.c[column.name]
            assert _kind(model) is _kind(column), (clause.name, column.name)
            if isinstance(column.type, sa.DateTime):
                assert isinstance(model.type, sa.DateTime), (clause.name, column.name)
                assert model.type.timezone == column.type.timezone, (clause.name, column.name)
