"""Committed changes reach listeners on PostgreSQL at once; rolled-back ones never do."""

from __future__ import annotations

import queue
import threading

import pytest
from sqlalchemy.engine import Engine

from store import make_engine, session_scope
from store.changes import Change, Notice, decode, encode, listen, supports_notices
from store.migrate import upgrade
from store.models import Benchmark, ReferenceStep, Task


class _Listener:
    """``listen`` on a thread, its notices in a queue."""

    def __init__(self, engine: Engine) -> None:
        self.notices: queue.Queue[Notice] = queue.Queue()
        self.stop, self.ready = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._run, args=(engine,), daemon=True)
        self.thread.start()
        assert self.ready.wait(20), "LISTEN was never set up"

    def _run(self, engine: Engine) -> None:
        for notice in listen(engine, self.stop, poll_seconds=0.1, ready=self.ready.set):
            self.notices.put(notice)

    def next(self) -> Notice:
        return self.notices.get(timeout=20)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


def _task(engine: Engine, actor: str = "ann") -> int:
    with session_scope(engine, actor=actor) as s:
        b = Benchmark(name="b", source_format="chainmark")
        s.add(b)
        s.flush()
        assert b.id is not None
        t = Task(benchmark_id=b.id, source_id="1", query="q")
        s.add(t)
        s.flush()
        return t.id  # type: ignore[return-value]


@pytest.mark.postgres
def test_a_committed_edit_is_heard_with_its_task_and_actor_and_a_rollback_is_not(pg_engine):
    listener = _Listener(pg_engine)
    try:
        task_id = _task(pg_engine)
        created = listener.next()
        assert created.actor == "ann" and created.touches_task(task_id)
        assert Change("task", task_id, task_id) in created.changes

        with pytest.raises(RuntimeError):
            with session_scope(pg_engine, actor="bob") as s:
                s.get(Task, task_id).query = "never committed"  # type: ignore[union-attr]
                s.flush()
                raise RuntimeError("abort")
        with session_scope(pg_engine, actor="cy") as s:
            s.add(ReferenceStep(task_id=task_id, ordinal=0, tool_name="OCR", tool_args={}))
        step = listener.next()  # the rolled-back edit sent nothing: the next notice is the step's
        assert step.actor == "cy" and step.touches_task(task_id)
        assert [c.entity for c in step.changes] == ["referencestep"]
        assert listener.notices.empty()
    finally:
        listener.close()


@pytest.mark.postgres
def test_a_bulk_change_says_refresh_everything(pg_engine):
    task_id = _task(pg_engine)
    listener = _Listener(pg_engine)
    try:
        with session_scope(pg_engine, actor="bulk") as s:
            for i in range(600):
                s.add(ReferenceStep(task_id=task_id, ordinal=i, tool_name="OCR", tool_args={}))
        notice = listener.next()
        assert notice.everything and notice.touches_task(12345) and notice.actor == "bulk"
    finally:
        listener.close()


def test_sqlite_has_no_notices_and_commits_still_work(tmp_path):
    eng = make_engine(str(tmp_path / "s.db"))
    upgrade(eng)
    assert not supports_notices(eng)
    task_id = _task(eng)
    with session_scope(eng) as s:
        assert s.get(Task, task_id).query == "q"  # type: ignore[union-attr]
        assert "_changes" not in s.info


def test_payloads_round_trip_and_foreign_ones_are_ignored():
    changes = [Change("task", 3, 3), Change("checkpoint", 9, 3), Change("task", 3, 3)]
    notice = decode(encode("ann", changes))
    assert notice == Notice("ann", (Change("task", 3, 3), Change("checkpoint", 9, 3)))
    assert decode("hello") is None and decode("[1, 2]") is None and decode('{"c": [[1]]}') is None
    assert decode('{"by": "x", "c": [["task", true, "3"]]}') == Notice("x", (Change("task", None, None),))
