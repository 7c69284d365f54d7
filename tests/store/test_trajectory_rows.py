"""The pending trajectory rows a run makes up front, on SQLite and PostgreSQL: one per task, kept on
a second call (a resume), with an empty usage object that reads back as a dict."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import select, col

from annotation import tasks as authoring
from evaluation.harness import RunSpec, add_endpoint, create_run
from evaluation.harness.recorder import ensure_trajectories
from store import session_scope
from store.models import Trajectory


def test_one_pending_row_per_task_and_a_second_call_keeps_them(any_engine: Engine) -> None:
    with session_scope(any_engine, "tester") as s:
        authoring.ensure_benchmark(s, "bench", tool_set="agentic-mme")
        task_ids = [
            authoring.create_task(s, "bench", f"question {i}", answer_spec={"kind": "contains", "value": "x"}).id
            for i in range(5)
        ]
        add_endpoint(s, "local", "http://127.0.0.1:9/v1", "model")
        run_id = create_run(s, RunSpec("bench", "local", "atomic")).id
    with session_scope(any_engine, "tester") as s:
        first = ensure_trajectories(s, run_id, task_ids[:3])
    with session_scope(any_engine, "tester") as s:
        every = ensure_trajectories(s, run_id, task_ids)
    assert list(every) == task_ids and {t: every[t] for t in task_ids[:3]} == first
    with session_scope(any_engine) as s:
        rows = s.exec(select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.task_id))).all()
        assert [(r.id, r.task_id, r.status, r.task_revision, r.usage, r.native) for r in rows] == [
            (every[t], t, "pending", 1, {}, None) for t in task_ids
        ]
