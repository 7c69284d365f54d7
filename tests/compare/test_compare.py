"""Run comparison: the pure compare function on hand-built results, and ``chainmark compare`` on a real store."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annotation import tasks as authoring
from evaluation.compare import RunResults, TaskResult, compare
from evaluation.scoring import report as reports
from store import session_scope
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tui.cli import cli
from tests.support.must import must


def run(run_id: int, scores: dict[int, float | None], answers: dict[int, str] | None = None) -> RunResults:
    r = RunResults(run_id=run_id, label=f"m{run_id} (run {run_id})", benchmark="b", mode="faithful")
    for task, score in scores.items():
        r.tasks[task] = TaskResult(
            task_id=task,
            trajectory_id=run_id * 100 + task,
            status="done" if score is not None else "failed",
            answer=(answers or {}).get(task, ""),
            score=score,
            query=f"q{task}",
        )
    return r


def test_rows_sorted_by_spread_with_summary() -> None:
    a = run(1, {1: 1.0, 2: 0.0, 3: 1.0, 4: 0.4})
    b = run(2, {1: 1.0, 2: 1.0, 3: 0.0, 4: 0.1})
    out = compare([a, b])
    assert [r.task_id for r in out.rows] == [2, 3, 4, 1]
    assert [r.spread for r in out.rows] == pytest.approx([1.0, 1.0, 0.3, 0.0])
    assert [r.differ for r in out.rows] == [True, True, True, False]
    assert out.summary["shared_tasks"] == 4 and out.summary["differing"] == 3
    assert out.summary["mean"] == {1: pytest.approx(2.4 / 4), 2: pytest.approx(2.1 / 4)}
    assert out.summary["right"] == {1: 2, 2: 2}
    assert out.summary["pairwise"] == [{"a": 1, "b": 2, "wins": 2, "ties": 1, "losses": 1}]
    assert out.notes == []
    assert [r.task_id for r in compare([a, b], sort="task").rows] == [1, 2, 3, 4]


def test_filters_and_limit() -> None:
    a = run(1, {1: 1.0, 2: 0.0, 3: 1.0, 4: 0.0})
    b = run(2, {1: 1.0, 2: 1.0, 3: 0.0, 4: 0.0})
    assert [r.task_id for r in compare([a, b], filter="a-right-b-wrong").rows] == [3]
    assert [r.task_id for r in compare([a, b], filter="b-right-a-wrong").rows] == [2]
    assert [r.task_id for r in compare([a, b], filter="all-wrong").rows] == [4]
    assert [r.task_id for r in compare([a, b], filter="all-right").rows] == [1]
    assert [r.task_id for r in compare([a, b], filter="any-differ").rows] == [2, 3]
    assert len(compare([a, b], limit=1).rows) == 1


def test_missing_score_counts_as_zero_and_three_runs_pairwise() -> None:
    a, b, c = run(1, {1: None}), run(2, {1: 1.0}), run(3, {1: 0.5})
    out = compare([a, b, c])
    assert out.rows[0].spread == 1.0 and out.rows[0].cells[0].status == "failed"
    assert out.summary["pairwise"] == [
        {"a": 1, "b": 2, "wins": 0, "ties": 0, "losses": 1},
        {"a": 1, "b": 3, "wins": 0, "ties": 0, "losses": 1},
        {"a": 2, "b": 3, "wins": 1, "ties": 0, "losses": 0},
    ]
    with pytest.raises(ValueError, match="exactly two"):
        compare([a, b, c], filter="a-right-b-wrong")


def test_different_task_sets_compare_shared_tasks_with_a_note() -> None:
    a = run(1, {1: 1.0, 2: 0.0, 5: 1.0})
    b = run(2, {1: 0.0, 2: 0.0, 6: 1.0, 7: 1.0})
    out = compare([a, b])
    assert sorted(r.task_id for r in out.rows) == [1, 2]
    assert out.summary["shared_tasks"] == 2
    assert out.notes == [
        "run 1 has 1 task(s) not in every run; compared on the 2 shared task(s) only",
        "run 2 has 2 task(s) not in every run; compared on the 2 shared task(s) only",
    ]


def test_compare_needs_two_runs() -> None:
    with pytest.raises(ValueError, match="at least two"):
        compare([run(1, {1: 1.0})])


# ------------------------------------------------------------------ real store


def two_gta_runs(engine) -> tuple[int, int, dict[str, int]]:
    """Two GTA e2e runs over three tasks: run A right on t0 and t1, run B right on t0 and t2."""
    with session_scope(engine, actor="tester") as s:
        a = stored_run(s, "gta-mini", "gta", mode="react", model="alpha")
        b = stored_run(s, "gta-mini", "gta", mode="react", model="beta")
        tasks = {}
        for n, (query, gold) in enumerate([("What is 1+1?", "2"), ("What is 2+3?", "5"), ("What is 3*3?", "9")]):
            t = authoring.create_task(
                s, "gta-mini", query, source_id=str(n), answer_spec={"kind": "whitelist", "groups": [[gold]]}
            )
            authoring.add_step(s, must(t.id), final_answer=gold)
            tasks[f"t{n}"] = t.id
        stored_trajectory(s, a, must(tasks["t0"]), [answer("2")])
        stored_trajectory(s, a, must(tasks["t1"]), [answer("5")])
        stored_trajectory(s, a, must(tasks["t2"]), [answer("7")])
        stored_trajectory(s, b, must(tasks["t0"]), [answer("2")])
        stored_trajectory(s, b, must(tasks["t1"]), [answer("4")])
        stored_trajectory(s, b, must(tasks["t2"]), [answer("9")])
        return a.id, b.id, tasks


def invoke(db, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_compare_json_on_stored_runs(engine, db_path) -> None:
    a, b, tasks = two_gta_runs(engine)
    doc = json.loads(invoke(db_path, "compare", str(a), str(b), "--json", "--embedder", "hashing"))
    assert [r["run_id"] for r in doc["runs"]] == [a, b]
    assert doc["summary"]["shared_tasks"] == 3 and doc["summary"]["differing"] == 2
    assert doc["summary"]["pairwise"] == [{"a": a, "b": b, "wins": 1, "ties": 1, "losses": 1}]
    assert [r["task_id"] for r in doc["rows"]] == [tasks["t1"], tasks["t2"], tasks["t0"]]
    first = doc["rows"][0]["cells"]
    assert [(c["answer"], c["score"], c["right"], c["status"]) for c in first] == [
        ("5", 1.0, True, "done"),
        ("4", 0.0, False, "done"),
    ]
    only = json.loads(
        invoke(db_path, "compare", str(a), str(b), "--json", "--embedder", "hashing", "--filter", "b-right-a-wrong")
    )
    assert [r["task_id"] for r in only["rows"]] == [tasks["t2"]]


def test_cli_compare_text(engine, db_path) -> None:
    a, b, _ = two_gta_runs(engine)
    out = invoke(db_path, "compare", str(a), str(b), "--embedder", "hashing", "--sort", "task", "--limit", "2")
    assert "3 shared task(s), 2 differ" in out
    assert f"run {a} vs run {b}" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(("0 ", "1 ", "2 "))]
    assert [ln.split()[0] for ln in lines] == ["0", "1"]


def test_report_has_a_comparison_section_for_several_runs(engine, db_path) -> None:
    a, b, _ = two_gta_runs(engine)
    out = invoke(db_path, "report", str(a), str(b), "--embedder", "hashing")
    assert "### run comparison (shared tasks)" in out
    assert f"| alpha (run {a}) | 0.67 | 2 |" in out
    single = invoke(db_path, "report", str(a), "--embedder", "hashing")
    assert "run comparison" not in single
    assert reports is not None


def test_cli_compare_unknown_run_is_one_clean_line(engine, db_path) -> None:
    a, _, _ = two_gta_runs(engine)
    result = CliRunner().invoke(cli, ["--db", str(db_path), "compare", str(a), "999"])
    assert result.exit_code != 0 and "no run with id 999" in result.output
    assert "Traceback" not in result.output


def test_profiles_map_their_per_item_rows_onto_0_1() -> None:
    from evaluation.benchmarks import agentic_mme, atp, gta, isg, vtc

    assert gta.PROFILE.item_score({"answer_score": 0.25}) == 0.25
    assert gta.PROFILE.item_score({"answer_correct": True}) == 1.0
    assert gta.PROFILE.item_score({"turns": 2}) is None
    assert vtc.PROFILE.item_score({"final": 1}) == 1.0 and vtc.PROFILE.item_score({}) is None
    assert agentic_mme.PROFILE.item_score({"final_answer_accuracy": {"correct": False}}) == 0.0
    assert agentic_mme.PROFILE.item_score({"dropped": "no answer"}) is None
    assert atp.PROFILE.item_score({"final_score": 80}) == pytest.approx(0.8)
    assert atp.PROFILE.item_score({"calls": 3}) is None
    assert isg.PROFILE.item_score({"holistic": 10}) == 1.0 and isg.PROFILE.item_score({"holistic": 1}) == 0.0
