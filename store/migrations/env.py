"""Alembic environment: SQLModel metadata as the target, batch mode on SQLite."""

from __future__ import annotations

from alembic import context
from sqlalchemy import text

import store.models  # noqa: F401  (fills SQLModel.metadata)
from sqlmodel import SQLModel

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        from store.db import make_engine

        engine = make_engine(config.get_main_option("sqlalchemy.url"))
        with engine.connect() as conn:
            _run(conn)
        engine.dispose()
    else:
        _run(connection)


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    is_sqlite = connection.dialect.name == "sqlite"
    if is_sqlite:
        # Batch migrations recreate tables; enforced FKs would block that.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=is_sqlite,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    if is_sqlite:
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
_ = text  # keep the import for migration scripts that use it
