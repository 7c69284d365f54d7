"""A run that breaks on its own data (a task image whose blob file was deleted) ends ``failed`` with the
reason, like a run whose endpoint or database gave out. It was recorded as ``cancelled``, which no one
had asked for, and the monitor showed it so."""

from __future__ import annotations

import pytest

from evaluation.harness import RunSpec, add_endpoint, create_run, run_blocking
from store import session_scope
from store.blobs import BlobNotFound
from store.models import Run


def test_a_missing_task_image_fails_the_run_and_says_why(engine, blobs, make_bench) -> None:  # type: ignore[no-untyped-def]
    make_bench(n=2)
    for path in blobs.root.rglob("*"):
        if path.is_file():
            path.unlink()
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "local", "http://127.0.0.1:9/v1", "scripted-model")
        run_id = create_run(s, RunSpec("bench", "local", "atomic", concurrency=2)).id
    with pytest.raises(BlobNotFound):
        run_blocking(engine, blobs, run_id)
    with session_scope(engine) as s:
        run = s.get(Run, run_id)
        assert run is not None
        assert run.status == "failed"
        assert "missing from the blob store" in run.config["stopped_because"]
