"""Fixtures every test area shares: a real SQLite file at the newest schema, a session, blobs.

Tests never use ``sqlite://`` in memory: thread workers would each see a different empty database.
The schema is built by Alembic once per test process and copied for each test (an upgrade costs
about 0.1 s of CPU and a burst of file syncs; a copy costs neither).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import make_engine, session_scope
from store.blobs import FolderBlobStore
from store.migrate import upgrade
from tests.support.template_db import copy_sqlite_template

# Keep a developer's environment out of the tests.
for _var in ("CHAINMARK_DB", "CHAINMARK_BLOBS", "CHAINMARK_USER", "TEXTUAL_THEME"):
    os.environ.pop(_var, None)
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "chainmark.db"


@pytest.fixture
def engine(db_path: Path) -> Iterator[Engine]:
    copied = copy_sqlite_template(db_path)
    eng = make_engine(db_path)
    if not copied:  # a file an earlier fixture put there is upgraded as it is
        upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """One unit of work acting as 'tester'; committed at the end of the test."""
    with session_scope(engine, actor="tester") as s:
        yield s


@pytest.fixture
def blobs(db_path: Path) -> FolderBlobStore:
    return FolderBlobStore(db_path.with_name(db_path.name + ".blobs"))
