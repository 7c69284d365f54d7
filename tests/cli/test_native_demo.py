"""The demo project holds a benchmark in chainmark's own format: tasks of three answer kinds with reference
chains over the GTA tools, checkpoints in order and an authored judge rubric; a model runs on it against the
scripted server, the rubric judges the open answer, and it scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_cli import run
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

DEMO = "demo-chainmark"


def tools_offered(db: Path, task_id: int) -> list[str]:
    from store import make_engine, session_scope
    from store.models import Task

    with session_scope(make_engine(f"sqlite:///{db}")) as s:
        return list(s.get(Task, task_id).tools_offered or [])  # type: ignore[union-attr]


def model_and_judge(req: Any) -> Any:
    """The model under test (an OCR call on the receipt, then answers) and the demo rubric's judge."""
    words = json.dumps(req.messages)
    if "Be strict about numbers" in words:  # the demo rubric's system text
        return text('{"score": 7, "analysis": "the peak day is right"}')
    if "split this bill" in words:
        if not any(m.get("role") == "tool" for m in req.messages):
            return tool_calls(("OCR", {"image": "images/receipt.png"}))
        return text("<answer>5.27</answer>")
    if "How many circles" in words:
        return text("<answer>five</answer>")
    return text("<answer>The deliveries go up and down and peak on Friday.</answer>")


def test_the_demo_has_a_native_benchmark_that_runs_judges_with_its_rubric_and_scores(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    built = json.loads(run(db, "demo", "--json").stdout)
    assert built["created"][DEMO] == 3 and built["rubrics"] == {DEMO: "1"}
    again = json.loads(run(db, "demo", "--json").stdout)
    assert again["created"][DEMO] == 0 and again["rubrics"] == {}  # the same rubric is not stored twice
    bench = {b["name"]: b for b in json.loads(run(db, "benchmarks", "list", "--json").stdout)}[DEMO]
    assert (bench["source_format"], bench["tool_set"]) == ("chainmark", "gta")
    tasks = {t["source_id"]: t for t in json.loads(run(db, "tasks", "list", "-b", DEMO, "--json").stdout)}
    assert {k: t["answer_kind"] for k, t in tasks.items()} == {
        "receipt-split": "numeric",
        "shape-count": "whitelist",
        "chart-trend": "interleaved",
    }
    first = json.loads(run(db, "tasks", "show", str(tasks["receipt-split"]["id"]), "--json").stdout)
    assert tools_offered(db, first["id"]) == ["OCR", "Calculator"]
    assert [(c["key"], c["axis"]) for c in first["checkpoints"]] == [("read", "V"), ("split", "S"), ("answer", "R")]
    assert "Be strict about numbers" in run(db, "rubrics", "show", DEMO).stdout
    with ScriptedOpenAI() as server:
        server.handler = model_and_judge
        run(db, "endpoints", "add", "sc", "--base-url", server.base_url, "--model", "m")
        summary = json.loads(run(db, "run", "-b", DEMO, "-e", "sc", "-m", "atomic", "-j", "2", "--json").stdout)
        assert (summary["done"], summary["failed"]) == (3, 0)
        judged = json.loads(
            run(db, "judge", str(summary["run_id"]), "--judge", "chainmark-rubric", "--endpoint", "sc", "--json").stdout
        )
        assert judged["verdicts"] == 1
    score = json.loads(run(db, "score", str(summary["run_id"]), "--json", "--per-item").stdout)
    by_task = {item["task_id"]: item for item in score["per_item"]}
    answers = {k: by_task[t["id"]]["answer"] for k, t in tasks.items()}
    assert answers == {
        "receipt-split": {"kind": "numeric", "correct": True},
        "shape-count": {"kind": "whitelist", "correct": True},
        "chart-trend": {"kind": "interleaved", "judge_score": 7.0},
    }
    assert score["pending_judgements"] == 0 and score["metrics"]["RubricScore"] == 7.0
