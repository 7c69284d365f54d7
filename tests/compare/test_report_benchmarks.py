"""A report over several benchmarks compares runs only within a benchmark: never a "comparison" of 0
shared tasks with a pairwise table of zeros."""

from __future__ import annotations

from annotation import tasks as authoring
from sqlmodel import select

from store import session_scope
from store.models import Task
from tests.compare.test_compare import invoke, two_gta_runs
from tests.scoring.builders import answer, stored_run, stored_trajectory


def one_more_gta_benchmark(engine, model: str) -> int:  # type: ignore[no-untyped-def]
    """A run of ``model`` on gta-other, a second GTA benchmark of one task (made on first use)."""
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "gta-other", "gta", mode="react", model=model)
        task = s.exec(select(Task).where(Task.benchmark_id == run.benchmark_id)).first()
        if task is None:
            spec = {"kind": "whitelist", "groups": [["8"]]}
            task = authoring.create_task(s, "gta-other", "What is 4+4?", source_id="0", answer_spec=spec)
            authoring.add_step(s, task.id or 0, final_answer="8")
        stored_trajectory(s, run, task.id or 0, [answer("8")])
        return int(run.id or 0)


def test_runs_of_different_benchmarks_are_not_compared(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    _, b, _ = two_gta_runs(engine)
    c = one_more_gta_benchmark(engine, "gamma")
    out = invoke(db_path, "report", str(b), str(c), "--embedder", "hashing")
    assert "run comparison" not in out and "0 shared" not in out
    # the report itself is there, a set of tables per benchmark
    assert "### gta-mini (gta): headline metrics" in out and "### gta-other (gta): headline metrics" in out


def test_several_benchmarks_compare_each_benchmark_s_own_runs(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = two_gta_runs(engine)
    c = one_more_gta_benchmark(engine, "gamma")
    d = one_more_gta_benchmark(engine, "delta")  # a second run of gta-other
    out = invoke(db_path, "report", str(a), str(b), str(c), str(d), "--embedder", "hashing")
    titles = [ln for ln in out.splitlines() if ln.startswith("### ") and "run comparison" in ln]
    assert titles == [
        "### gta-mini: run comparison (shared tasks): 3 shared, 2 differ",
        "### gta-mini: run comparison: pairwise (wins/ties/losses of the first run on per-task score)",
        "### gta-mini: run comparison: largest disagreements (top 2)",
        "### gta-other: run comparison (shared tasks): 1 shared, 0 differ",
        "### gta-other: run comparison: pairwise (wins/ties/losses of the first run on per-task score)",
    ]
    assert f"| {a} | {c} |" not in out and f"| {a} | {b} | 1 | 1 | 1 |" in out  # no pair across benchmarks
