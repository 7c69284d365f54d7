"""Create or upgrade a database to the newest schema (Alembic owns the schema, never create_all).

Every open of a database checks its revision against the newest one. Alembic takes about 0.1 s to
import, on the way to the TUI's first data, so the check reads the version table and the
revision lines of the migration files itself; upgrading uses Alembic.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).with_name("migrations")
_REVISION = re.compile(r"^revision\b[^=\n]*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN_REVISION = re.compile(r"^down_revision\b[^=\n]*=\s*(?:['\"]([^'\"]+)['\"]|None)", re.M)


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return cfg


def head_revision(engine: Engine) -> str:
    """The newest revision: in a straight history, the one no migration names as its parent."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revision, parent = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or parent is None:
            return _alembic_head(engine)
        revisions.add(revision.group(1))
        if parent.group(1):
            parents.add(parent.group(1))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else _alembic_head(engine)


def _alembic_head(engine: Engine) -> str:
    """Alembic's answer, for histories the plain reading does not handle (branches, tuples)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head() or ""


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table("alembic_version"):
            return None
        versions = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    if len(versions) > 1:
        raise RuntimeError(f"the database has several schema heads ({', '.join(versions)}); run alembic merge")
    return versions[0] if versions else None


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
