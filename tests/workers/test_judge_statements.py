"""SQL statements a judged item costs: judging is CPU-bound per item in the worker (each statement is
a round trip, a compile and row handling), so a regression that loads the run again per round, or per
call, must fail here. Counted with an engine event listener around the judging itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evaluation.judges import queue as jq
from evaluation.judges.runner import SetupCache, check_judge, judge_run
from store import session_scope
from store.blobs import FolderBlobStore
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.workers.test_judge_queue import JUDGE, vtc_run

N = 6


@contextmanager
def counted(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def note(conn, cursor, statement, params, context, executemany):  # type: ignore[no-untyped-def]
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)


def test_plain_judge_run_statements_per_item(engine, blobs) -> None:
    with ScriptedOpenAI(handler=lambda req: text("Yes")) as server:
        run_id = vtc_run(engine, server.base_url, N)
        with counted(engine) as seen:
            stats = judge_run(engine, blobs, run_id, JUDGE, "j")
    assert stats["verdicts"] == N and stats["model_calls"] == N
    # A whole run at once: the run is read once, each round's questions and verdicts in bulk.
    assert len(seen) / N <= 8, f"{len(seen)} statements for {N} items:\n" + "\n".join(s[:150] for s in seen)


@pytest.mark.postgres
def test_queued_item_statements(pg_engine, tmp_path) -> None:
    blobs = FolderBlobStore(tmp_path / "blobs")
    with ScriptedOpenAI(handler=lambda req: text("Yes")) as server:
        run_id = vtc_run(pg_engine, server.base_url, N)
        check_judge(pg_engine, run_id, JUDGE, "j", "faithful")
        with session_scope(pg_engine) as s:
            assert jq.enqueue(s, run_id, JUDGE, "j") == N
        with session_scope(pg_engine) as s:
            items = jq.claim(s, "tok", N, 60.0)
        assert len(items) == N
        setups = SetupCache()  # as `chainmark worker` keeps one
        with counted(pg_engine) as seen:
            results = [jq.judge_item(pg_engine, blobs, "tok", item, setups=setups) for item in items]
    assert all(r["verdicts"] == 1 and not r["lost"] and r["error"] is None for r in results)
    # Was about 44 per item (the run loaded three times per item, the judge set up per item).
    assert len(seen) / N <= 20, f"{len(seen) / N:.1f} statements per item:\n" + "\n".join(
        s[:150] for s in seen[: len(seen) // N]
    )


def test_setup_cache_reuses_within_its_time_and_reads_again_after(engine) -> None:
    with ScriptedOpenAI(handler=lambda req: text("Yes")) as server:
        vtc_run(engine, server.base_url, 1)
    kept = SetupCache(ttl=3600)
    first = kept.get(engine, JUDGE, "j", "faithful")
    with counted(engine) as seen:
        assert kept.get(engine, JUDGE, "j", "faithful") is first
    assert seen == []
    fresh = SetupCache(ttl=0)  # expired at once: read again each time, the same judge
    again = fresh.get(engine, JUDGE, "j", "faithful")
    assert again is not first and again == first and fresh.get(engine, JUDGE, "j", "faithful") is not again
    assert first.name == f"{JUDGE}@j" and first.judge_id > 0
