"""Alembic environment: SQLModel metadata as the target, batch mode on SQLite."""

from __future__ import annotations

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

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


def _run(connection: Connection) -> None:
    if connection.dialect.name != "sqlite":
        context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    # Batch migrations recreate tables (create, copy, drop, rename); enforced foreign keys would make
    # dropping a referenced table fail. SQLite ignores this pragma inside a transaction, so it is set
    # first, and every migration then runs in one transaction of ours (BEGIN IMMEDIATE: one writer).
    _sqlite_foreign_keys(connection, on=False)
    try:
        with connection.begin():
            context.configure(
                connection=connection, target_metadata=target_metadata, render_as_batch=True, compare_type=True
            )
            context.run_migrations()
            _refuse_broken_references(connection)
    finally:
        _sqlite_foreign_keys(connection, on=True)


def _sqlite_foreign_keys(connection: Connection, *, on: bool) -> None:
    """Set the pragma on the driver connection, outside any transaction (where SQLite honours it)."""
    if connection.in_transaction():
        raise RuntimeError(
            "SQLite migrations need a connection outside a transaction "
            "(PRAGMA foreign_keys is ignored inside one): pass engine.connect(), not engine.begin()"
        )
    driver = connection.connection.driver_connection
    assert driver is not None, "a checked-out connection has its driver connection"
    driver.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def _refuse_broken_references(connection: Connection) -> None:
    """With enforcement off, a migration could leave dangling references; roll it back if it did."""
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
    if broken:
        sample = ", ".join(f"{row[0]} row {row[1]} -> {row[2]}" for row in broken[:5])
        raise RuntimeError(f"the migration left {len(broken)} broken foreign key(s): {sample}")


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
_ = text  # keep the import for migration scripts that use it
