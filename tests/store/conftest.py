"""The store suite runs against SQLite and, when its binaries are installed, a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from store import make_engine
from tests.support.postgres import ThrowawayCluster
from tests.support.template_db import copy_sqlite_template


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database, or one at the newest schema when the test asks for ``any_engine`` too
    (what ``upgrade`` writes, built once and copied)."""
    migrated = "any_engine" in request.fixturenames
    if request.param == "sqlite":
        path = tmp_path / "store.db"
        if migrated:
            copy_sqlite_template(path)
        return str(path)
    cluster: ThrowawayCluster = request.getfixturevalue("pg_cluster")
    return cluster.new_database(migrated=migrated)


@pytest.fixture
def any_engine(any_url: str) -> Iterator[Engine]:
    eng = make_engine(any_url)
    yield eng
    eng.dispose()


@pytest.fixture
def pg_engine(pg_cluster: ThrowawayCluster) -> Iterator[Engine]:
    """A fresh database on the throwaway cluster, at the newest schema."""
    eng = make_engine(pg_cluster.new_database(migrated=True))
    yield eng
    eng.dispose()
