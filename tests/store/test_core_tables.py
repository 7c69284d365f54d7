"""The Core tables the fast paths use (store.tables, through store.core_tables) are the models' tables:
derived from ``SQLModel.metadata`` and current, every table and column with its type. (That the
migrations build the models' schema is tests/store/test_migrations.py's.)"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from store import core_tables, derive_tables, tables

MODELS = derive_tables.model_metadata()


def test_the_tables_module_is_what_the_models_derive_now() -> None:
    written = derive_tables.TARGET.read_text()
    assert written == derive_tables.render(MODELS), "store.models changed: run `python -m store.derive_tables`"


def test_core_tables_name_every_model_table() -> None:
    assert {t.name for t in core_tables.TABLES} == set(MODELS.tables)
    for clause in tables.TABLES:
        assert getattr(core_tables, clause.name) is clause


@pytest.mark.parametrize("name", sorted(MODELS.tables))
def test_each_core_table_has_the_models_columns_in_order_with_their_types(name: str) -> None:
    def base(column: sa.ColumnElement) -> sa.types.TypeEngine:
        kind = column.type  # SQLModel's AutoString decorates String: the same DDL and values
        return kind.impl_instance if isinstance(kind, sa.types.TypeDecorator) else kind

    model, core = MODELS.tables[name], getattr(tables, name)
    assert list(core.c.keys()) == list(model.c.keys())
    for column in model.c:
        ours = base(core.c[column.name])
        assert (type(ours), repr(ours)) == (type(base(column)), repr(base(column))), (name, column.name)
