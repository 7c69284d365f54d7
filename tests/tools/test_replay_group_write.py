"""Replay rows recorded by many service calls at the same moment are written together, and no call
returns before its own row is in the database (or its batch's failure is raised to it)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from evaluation.tools import ToolContext, ToolSettings, replay
from evaluation.tools.result import StoreBusy

CALLERS = 12


def _record_at_once(engine, db_path, monkeypatch, second_batch: Callable[[Any, list], None] | None = None):  # type: ignore[no-untyped-def]
    """One caller's write is held open while the others queue behind it; then it is let go. Returns
    the rows each write transaction carried and, per caller, what it got: True if its row was in the
    database the moment ``record`` returned, else the exception it raised."""
    group = replay._group_for(engine)
    writes: list[int] = []
    first_in, release = threading.Event(), threading.Event()
    real = replay._write_rows

    def write_rows(s, rows):  # type: ignore[no-untyped-def]
        writes.append(len(rows))
        if len(writes) == 1:
            first_in.set()
            assert release.wait(30)
        elif second_batch is not None:
            second_batch(s, rows)
        real(s, rows)

    monkeypatch.setattr(replay, "_write_rows", write_rows)
    ctx = ToolContext(engine=engine, settings=ToolSettings(), allow_paths=False)
    outcome: dict[int, Any] = {}

    def caller(i: int) -> None:
        request = {"q": f"question {i}"}
        try:
            replay.record(ctx, "search", request, {"answer": i})
        except Exception as exc:  # noqa: BLE001 - what the caller got is the point
            outcome[i] = exc
            return
        with sqlite3.connect(db_path) as other:
            key = replay.request_key("search", request)
            outcome[i] = other.execute("SELECT count(*) FROM replaycache WHERE key = ?", (key,)).fetchone()[0] == 1

    threads = [threading.Thread(target=caller, args=(0,))]
    threads[0].start()
    assert first_in.wait(30)
    threads += [threading.Thread(target=caller, args=(i,)) for i in range(1, CALLERS)]
    for t in threads[1:]:
        t.start()
    deadline = time.monotonic() + 30
    while len(group.queued) < CALLERS - 1 and time.monotonic() < deadline:  # every other caller queued
        time.sleep(0.005)
    release.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    return writes, outcome


def test_rows_recorded_at_once_are_written_in_one_transaction_and_each_caller_waits_for_its_own(
    engine, db_path, monkeypatch
):
    writes, outcome = _record_at_once(engine, db_path, monkeypatch)

    assert writes == [1, CALLERS - 1]  # one transaction per row before: 12 of them
    assert outcome == {i: True for i in range(CALLERS)}
    with sqlite3.connect(db_path) as other:
        assert other.execute("SELECT count(*) FROM replaycache").fetchone()[0] == CALLERS


def test_a_batch_the_database_refuses_fails_every_caller_in_it_and_no_other(engine, db_path, monkeypatch):
    def refuse(s, rows):  # type: ignore[no-untyped-def]
        raise StoreBusy("the database stayed locked through 4 attempts: database is locked")

    writes, outcome = _record_at_once(engine, db_path, monkeypatch, second_batch=refuse)

    assert writes == [1, CALLERS - 1]
    assert outcome[0] is True
    assert all(isinstance(outcome[i], StoreBusy) and "locked" in str(outcome[i]) for i in range(1, CALLERS))
    with sqlite3.connect(db_path) as other:
        assert other.execute("SELECT count(*) FROM replaycache").fetchone()[0] == 1


def test_the_same_request_recorded_twice_in_one_batch_keeps_the_first_answer(engine, db_path):
    ctx = ToolContext(engine=engine, settings=ToolSettings(), allow_paths=False)
    rows = [
        {"key": replay.request_key("search", {"q": "x"}), "kind": "search", "request": {"q": "x"}, "response": r}
        for r in ({"answer": "first"}, {"answer": "second"})
    ]
    replay._write_batch(ctx, rows)
    replay._write_batch(ctx, [{**rows[1], "response": {"answer": "third"}}])

    with sqlite3.connect(db_path) as other:
        assert other.execute("SELECT response FROM replaycache").fetchall() == [('{"answer": "first"}',)]
