"""Alembic owns the schema: head must equal the models, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect
from sqlmodel import SQLModel

from store import make_engine
from store.migrate import current_revision, head_revision, is_current, upgrade
from store.models import ALL_TABLES


def test_upgrading_an_empty_database_to_head_equals_the_models(any_engine):
    """Autogenerate finds nothing to do: tables, columns, types, nullability, server defaults, keys,
    indexes and unique constraints of the migrated database are the models'."""
    with any_engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        diff = compare_metadata(ctx, SQLModel.metadata)
    assert diff == []


def test_every_model_table_exists_after_upgrade(any_engine):
    names = set(inspect(any_engine).get_table_names())
    assert {t.__tablename__ for t in ALL_TABLES} <= names
    assert "alembic_version" in names


def test_upgrade_is_idempotent_and_reports_head(any_url):
    eng = make_engine(any_url)
    assert current_revision(eng) is None
    assert upgrade(eng) == head_revision(eng)
    assert upgrade(eng) == head_revision(eng)
    assert is_current(eng)
    eng.dispose()


def test_revision_check_agrees_with_alembic(any_url):
    """The open-time check reads the version table and the migration files itself (no Alembic import)."""
    from alembic.script import ScriptDirectory

    from store.migrate import alembic_config

    eng = make_engine(any_url)
    assert head_revision(eng) == ScriptDirectory.from_config(alembic_config(eng)).get_current_head()
    upgrade(eng)
    with eng.connect() as conn:
        assert current_revision(eng) == MigrationContext.configure(conn).get_current_revision() == head_revision(eng)
    eng.dispose()
