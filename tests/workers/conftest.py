"""Queued runs and `chainmark worker` on a throwaway PostgreSQL cluster (the store tests' fixture) with
the scripted OpenAI-compatible server the harness tests use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from annotation import tasks as authoring
from evaluation.harness import add_endpoint
from store import make_engine, session_scope
from store.blobs import FolderBlobStore
from tests.harness.conftest import png
from tests.support.postgres import ThrowawayCluster


@pytest.fixture
def pg_url(pg_cluster: ThrowawayCluster) -> str:  # noqa: F811
    """A new database at the newest schema (what ``upgrade`` writes, copied from the cluster's template)."""
    return pg_cluster.new_database(migrated=True)


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    eng = make_engine(pg_url)
    yield eng
    eng.dispose()


@pytest.fixture
def pg_blobs(tmp_path: Path) -> FolderBlobStore:
    return FolderBlobStore(tmp_path / "blobs")


def make_bench(engine: Engine, blobs: FolderBlobStore, base_url: str, n: int) -> list[int]:
    """A benchmark "mme" of ``n`` one-image tasks and an endpoint "local" at ``base_url``."""
    ids = []
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "chainmark", tool_set="agentic-mme")
        for i in range(n):
            t = authoring.create_task(
                s, "mme", f"What colour is the left half? (task {i})", answer_spec={"kind": "contains", "value": "red"}
            )
            authoring.attach_asset(s, blobs, int(t.id or 0), png(), original_path=f"image/image_{i}.png")
            ids.append(int(t.id or 0))
        add_endpoint(s, "local", base_url, "scripted-model")
    return ids
