"""Create or upgrade a database to the newest schema (Alembic owns the schema, never create_all).

Every open of a database checks its revision against the newest one. Alembic takes about 0.1 s to
import, on the way to the TUI's first data, so the check reads the version table and the
revision lines of the migration files itself; upgrading uses Alembic.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from store.schema_head import MIGRATIONS, one_revision, plain_head

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return cfg


def head_revision(engine: Engine) -> str:
    """The newest revision (``store.schema_head``; Alembic's answer when the plain reading can't tell)."""
    return plain_head() or _alembic_head(engine)


def _alembic_head(engine: Engine) -> str:
    """Alembic's answer, for histories the plain reading does not handle (branches, tuples)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head() or ""


def current_revision(engine: Engine) -> str | None:
    from store.db import read_only

    with read_only(engine).connect() as conn:  # a reader: never queue behind another's write lock
        if not sa.inspect(conn).has_table("alembic_version"):
            return None
        versions = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    return one_revision(versions)


def is_current(engine: Engine) -> bool:
    return current_revision(engine) == head_revision(engine)


def upgrade(engine: Engine, revision: str = "head") -> str:
    """Upgrade to ``revision``; returns the revision the database is at afterwards."""
    from alembic import command

    cfg = alembic_config(engine)
    before = current_revision(engine)
    # A connection without a transaction: the migration environment sets SQLite's foreign_keys pragma
    # first (ignored inside a transaction), then runs every migration in one transaction of its own.
    with engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    after = current_revision(engine) or ""
    if after != before:
        log.info("schema %s -> %s (%s)", before or "empty", after, engine.url.render_as_string(hide_password=True))
    return after
