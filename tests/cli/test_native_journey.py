"""A benchmark of your own, end to end from the CLI: create it, author tasks with images, reference chains
recorded by running real tools and checkpoints, run a model on them against the scripted server, judge the
open answer with the rubric its author wrote, score, report, export to chainmark's own format (rubric included) and import it back
into another database unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from tests.cli.test_cli import run
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

ANSWER_TWICE = "Twice the price on the tag?"
ANSWER_PI = "Roughly how long is the bar, in metres?"
ANSWER_OPEN = "Describe the picture in one sentence."
RUBRIC = "Grade the description of a picture.\nTask: {{query}}\nAnswer: {{answer}}\nExpected: {{golden}}\nOUR-RUBRIC\n"


def picture(path: Path, colour: str) -> Path:
    Image.new("RGB", (64, 48), colour).save(path)
    return path


def author(db: Path, tmp_path: Path) -> list[int]:
    """Three tasks of three answer kinds; the first with a recorded chain, a final answer and checkpoints."""
    run(db, "benchmarks", "add", "mine", "--format", "chainmark", "--tools", "gta", "--description", "ours")
    specs = [
        (ANSWER_TWICE, {"kind": "exact", "value": "58"}, "red"),
        (ANSWER_PI, {"kind": "numeric", "value": 3.14, "tolerance": 0.01}, "green"),
        (ANSWER_OPEN, {"kind": "interleaved", "golden": [{"type": "text", "content": "A plain blue square."}]}, "blue"),
    ]
    ids = []
    for i, (query, spec, colour) in enumerate(specs):
        image = str(picture(tmp_path / f"p{i}.png", colour))
        made = run(db, "tasks", "add", "-b", "mine", "-q", query, "--answer", json.dumps(spec), "--image", image,
                   "--category", "demo", "--json")  # fmt: skip
        ids.append(json.loads(made.stdout)["id"])
    first = str(ids[0])
    calc = json.loads(run(db, "chain", "add", first, "Calculator", "--args", '{"expression": "29*2"}', "--json").stdout)
    assert "58" in calc["result"]
    run(db, "chain", "final", first, "58")
    run(db, "checkpoints", "add", first, "V1", "--tools", "Calculator", "--step", "0")
    return ids


def model_and_judge(req: Any) -> Any:
    """The model under test (a Calculator call, then answers) and the rubric judge (a JSON score)."""
    words = json.dumps(req.messages)
    if "OUR-RUBRIC" in words:
        return text('{"score": 8, "analysis": "close to the expected answer"}')
    if ANSWER_TWICE in words:
        if not any(m.get("role") == "tool" for m in req.messages):
            return tool_calls(("Calculator", {"expression": "29*2"}))
        return text("<answer>58</answer>")
    if ANSWER_PI in words:
        return text("<answer>3.141</answer>")
    return text("<answer>A blue square.</answer>")


def test_a_native_benchmark_is_authored_run_judged_scored_reported_exported_and_reimported(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    ids = author(db, tmp_path)
    with ScriptedOpenAI() as server:
        server.handler = model_and_judge
        run(db, "endpoints", "add", "sc", "--base-url", server.base_url, "--model", "m")
        summary = json.loads(run(db, "run", "-b", "mine", "-e", "sc", "-m", "atomic", "-j", "2", "--json").stdout)
        assert (summary["done"], summary["failed"]) == (3, 0)
        pending = json.loads(run(db, "score", str(summary["run_id"]), "--json").stdout)
        assert pending["pending_judgements"] == 1
        (tmp_path / "rubric.md").write_text(RUBRIC)
        run(db, "rubrics", "add", "mine", "--file", str(tmp_path / "rubric.md"))
        judged = json.loads(
            run(db, "judge", str(summary["run_id"]), "--judge", "chainmark-rubric", "--endpoint", "sc", "--json").stdout
        )
        assert judged["verdicts"] == 1
        rubric_prompts = [r for r in server.requests if "OUR-RUBRIC" in json.dumps(r.messages)]
        assert len(rubric_prompts) == 1 and "A plain blue square." in json.dumps(rubric_prompts[0].messages)
    score = json.loads(run(db, "score", str(summary["run_id"]), "--json", "--per-item").stdout)
    assert score["pending_judgements"] == 0
    assert (score["metrics"]["AnswerAcc"], score["metrics"]["RubricScore"], score["metrics"]["V"]) == (
        100.0,
        8.0,
        100.0,
    )
    by_task = {item["task_id"]: item for item in score["per_item"]}
    assert by_task[ids[0]]["answer"] == {"kind": "exact", "correct": True}
    assert by_task[ids[0]]["chain"]["steps"] == [
        {"tool": True, "arguments": True, "result_used": True, "has_result": True}
    ]
    assert by_task[ids[1]]["answer"] == {"kind": "numeric", "correct": True}
    assert by_task[ids[2]]["answer"] == {"kind": "interleaved", "judge_score": 8.0}
    report = run(db, "report", str(summary["run_id"])).stdout
    assert "### mine (chainmark): headline metrics" in report  # the benchmark's name, not only its profile
    assert "| m (run 1) | atomic | faithful | – | 100.00 | 8.00 | 100.00 | 100.00 | 100.00 |" in report
    assert "| model | demo | level unlevelled |\n|---|---|---|\n| m (run 1) | 100.00 | 100.00 |" in report
    export_dir = tmp_path / "out"
    run(db, "export", "chainmark", str(export_dir), "-b", "mine")
    other = tmp_path / "y.db"
    run(other, "import", "chainmark", str(export_dir), "-b", "mine")
    again = tmp_path / "again"
    run(other, "export", "chainmark", str(again), "-b", "mine")
    assert (again / "tasks.jsonl").read_bytes() == (export_dir / "tasks.jsonl").read_bytes()
    shown = [json.loads(run(other, "tasks", "show", str(i), "--json").stdout) for i in (1, 2, 3)]
    assert [t["query"] for t in shown] == [ANSWER_TWICE, ANSWER_PI, ANSWER_OPEN]
    assert (again / "rubrics.jsonl").read_bytes() == (export_dir / "rubrics.jsonl").read_bytes()
    assert run(other, "rubrics", "list", "mine").stdout == run(db, "rubrics", "list", "mine").stdout
    judge_the_reimported_benchmark(other)


def judge_the_reimported_benchmark(db: Path) -> None:
    """The rubric came with the benchmark: a run on the other database is judged with its v1."""
    with ScriptedOpenAI() as server:
        server.handler = model_and_judge
        run(db, "endpoints", "add", "sc", "--base-url", server.base_url, "--model", "m")
        summary = json.loads(run(db, "run", "-b", "mine", "-e", "sc", "-m", "atomic", "-j", "2", "--json").stdout)
        judge = ["judge", str(summary["run_id"]), "--judge", "chainmark-rubric", "--endpoint", "sc"]
        judged = json.loads(run(db, *judge, "--rubric-version", "1", "--json").stdout)
        assert judged["verdicts"] == 1
        assert sum("OUR-RUBRIC" in json.dumps(r.messages) for r in server.requests) == 1
    score = json.loads(run(db, "score", str(summary["run_id"]), "--json").stdout)
    assert (score["pending_judgements"], score["metrics"]["RubricScore"]) == (0, 8.0)
