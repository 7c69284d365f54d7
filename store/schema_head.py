"""The schema revision a database must be at, read from the migration files' ``revision`` lines,
and the revision a database's version table says it is at: no Alembic, no SQLAlchemy, so every open
(``store.migrate`` for the engine, ``store.sqlite_read`` for the listings) checks the same way."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

MIGRATIONS = Path(__file__).with_name("migrations")
_REVISION = re.compile(r"^revision\b[^=\n]*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN_REVISION = re.compile(r"^down_revision\b[^=\n]*=\s*(?:['\"]([^'\"]+)['\"]|None)", re.M)


def plain_head() -> str | None:
    """The newest revision: in a straight history, the one no migration names as its parent. None
    when the files say more than that reading handles (branches, tuples): Alembic then decides."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        revision, parent = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or parent is None:
            return None
        revisions.add(revision.group(1))
        if parent.group(1):
            parents.add(parent.group(1))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def known_revisions() -> set[str]:
    """Every revision this chainmark's migration files define."""
    found = (_REVISION.search(p.read_text(encoding="utf-8")) for p in (MIGRATIONS / "versions").glob("*.py"))
    return {m.group(1) for m in found if m}


def made_by_newer(current: str) -> bool:
    """Is ``current`` a revision this chainmark has no migration for (a newer chainmark wrote it)?"""
    return current not in known_revisions()


def one_revision(versions: Sequence[str]) -> str | None:
    """The revision of the rows of ``alembic_version`` (None: none yet); several are an error."""
    if len(versions) > 1:
        raise RuntimeError(f"the database has several schema heads ({', '.join(versions)}); run alembic merge")
    return versions[0] if versions else None
