"""The store suite runs against SQLite and, when its binaries are installed, a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from store import make_engine
from store.migrate import upgrade
from tests.support.postgres import ThrowawayCluster, pg_bindir


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[ThrowawayCluster]:
    bindir = pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs them)")
    cluster = ThrowawayCluster(bindir)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    cluster: ThrowawayCluster = request.getfixturevalue("pg_cluster")
    return cluster.new_database()


@pytest.fixture
def any_engine(any_url: str) -> Iterator[Engine]:
    eng = make_engine(any_url)
    upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def pg_engine(pg_cluster: ThrowawayCluster) -> Iterator[Engine]:
    """A fresh database on the throwaway cluster, at the newest schema."""
    eng = make_engine(pg_cluster.new_database())
    upgrade(eng)
    yield eng
    eng.dispose()
