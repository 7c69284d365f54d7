"""The Core tables the fast paths use (store.tables, through store.core_tables) are the models' tables:
derived from ``SQLModel.metadata``, current, and equal to them in DDL, defaults and the migrated schema."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.schema import CreateIndex, CreateTable

from store import core_tables, derive_tables, tables

MODELS = derive_tables.model_metadata()


def test_the_tables_module_is_what_the_models_derive_now() -> None:
    written = derive_tables.TARGET.read_text()
    assert written == derive_tables.render(MODELS), "store.models changed: run `python -m store.derive_tables`"


def test_core_tables_name_every_model_table() -> None:
    assert {t.name for t in core_tables.TABLES} == set(MODELS.tables)
    for name in MODELS.tables:
        assert getattr(core_tables, name) is tables.metadata.tables[name]


@pytest.mark.parametrize("dialect", [sqlite.dialect(), postgresql.dialect()], ids=["sqlite", "postgresql"])
@pytest.mark.parametrize("name", sorted(MODELS.tables))
def test_each_core_table_writes_the_models_ddl(name: str, dialect: sa.Dialect) -> None:
    model, core = MODELS.tables[name], tables.metadata.tables[name]
    assert str(CreateTable(core).compile(dialect=dialect)) == str(CreateTable(model).compile(dialect=dialect))
    indexes = sorted(str(CreateIndex(i).compile(dialect=dialect)) for i in core.indexes)
    assert indexes == sorted(str(CreateIndex(i).compile(dialect=dialect)) for i in model.indexes)


@pytest.mark.parametrize("name", sorted(MODELS.tables))
def test_each_core_column_has_the_models_type_and_constant_default(name: str) -> None:
    def base(column: sa.Column) -> sa.types.TypeEngine:
        kind = column.type  # SQLModel's AutoString decorates String
        return kind.impl_instance if isinstance(kind, sa.types.TypeDecorator) else kind

    def default(column: sa.Column) -> object:
        return None if column.default is None else getattr(column.default, "arg")

    model, core = MODELS.tables[name], tables.metadata.tables[name]
    assert list(core.c.keys()) == list(model.c.keys())
    for column in model.c:
        ours = core.c[column.name]
        assert repr(base(ours)) == repr(base(column)), (name, column.name)
        assert (default(ours), ours.nullable, ours.primary_key) == (
            default(column),
            column.nullable,
            column.primary_key,
        )
    assert core.dialect_kwargs == model.dialect_kwargs


def test_autogenerate_finds_the_migrated_schema_equal_to_the_core_tables(any_engine: Engine) -> None:
    """What the migrations built is what the Core tables describe (SQLite, and PostgreSQL when installed)."""
    with any_engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        assert compare_metadata(context, tables.metadata) == []
