"""On PostgreSQL too (server-side cursors, sub-selects on the run), the streamed scoring loader reads
what the ORM loader read, and the scores match."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.engine import Engine

from evaluation.scoring import runner
from evaluation.scoring.loader import load_run
from evaluation.scoring.runner import score_run
from store import read_only, session_scope
from tests.scoring import orm_loader_reference
from tests.support.scoring_runs import write_run


def _scores(engine: Engine, run_id: int) -> str:
    return json.dumps(
        score_run(engine, run_id, embedder="hashing", write=False).public(per_item=True), sort_keys=True, default=str
    )


def test_streamed_loader_equals_the_orm_loader_on_postgresql(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = write_run(pg_engine, "agentic-mme", 300)
    with session_scope(read_only(pg_engine)) as s:
        new, old = load_run(s, run_id), orm_loader_reference.load_run(s, run_id)
    assert len(new.items) == 300 and vars(new) == vars(old)
    streamed = _scores(pg_engine, run_id)
    monkeypatch.setattr(runner, "load_run", orm_loader_reference.load_run)
    assert streamed == _scores(pg_engine, run_id)


def test_a_gta_run_scored_in_chunks_on_postgresql_gives_the_whole_runs_result(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunked path (id ranges, one oracle per chunk) on PostgreSQL, and its CheckpointResult writer."""
    run_id = write_run(pg_engine, "gta", 50)
    whole = _scores(pg_engine, run_id)
    monkeypatch.setattr(runner, "CHUNK", 7)
    assert _scores(pg_engine, run_id) == whole
    amme = write_run(pg_engine, "agentic-mme", 40)
    written = score_run(pg_engine, amme, embedder="hashing").checkpoint_results_written
    assert written and written == score_run(pg_engine, amme, embedder="hashing").checkpoint_results_written
