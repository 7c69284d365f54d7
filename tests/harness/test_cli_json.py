"""`chainmark run --json` prints one JSON document on stdout (the run id is in it); progress and the
run id line go to stderr, so `json.loads(stdout)` works in scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli


def test_run_json_is_one_document(engine, db_path: Path, make_bench, scripted_openai: ScriptedOpenAI) -> None:
    make_bench("mme", n=2)
    runner = CliRunner()
    added = runner.invoke(
        cli,
        [
            "--db",
            str(db_path),
            "endpoints",
            "add",
            "local",
            "--base-url",
            scripted_openai.base_url,
            "--model",
            "m",
            "--json",
        ],
        catch_exceptions=False,
    )
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["name"] == "local"
    scripted_openai.handler = lambda req: text("<answer>red</answer>")
    r = runner.invoke(
        cli, ["--db", str(db_path), "run", "-b", "mme", "-e", "local", "-m", "atomic", "--json"], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["done"] == 2 and summary["failed"] == 0 and summary["status"] == "done"
    assert f"run {summary['run_id']}" in r.stderr

    resumed = runner.invoke(
        cli, ["--db", str(db_path), "run", "--resume", str(summary["run_id"]), "--json"], catch_exceptions=False
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["run_id"] == summary["run_id"]


def test_a_benchmark_in_chainmarks_own_format_runs_scores_and_reports(
    engine, db_path: Path, make_bench, scripted_openai: ScriptedOpenAI
) -> None:
    """``benchmarks add NAME --format chainmark`` was runnable but not scorable ("no scoring profile")."""
    make_bench("mine", n=3, answer={"kind": "exact", "value": "red", "variants": ["crimson"]})
    runner = CliRunner()
    db = ["--db", str(db_path)]
    added = runner.invoke(cli, [*db, "endpoints", "add", "local", "--base-url", scripted_openai.base_url, "-m", "m"])
    assert added.exit_code == 0, added.output
    replies = iter(["<answer>red</answer>", "<answer>crimson</answer>", "<answer>blue</answer>"])
    scripted_openai.handler = lambda req: text(next(replies))
    r = runner.invoke(cli, [*db, "run", "-b", "mine", "-e", "local", "-m", "atomic", "-j", "1", "--json"])
    assert r.exit_code == 0, r.output
    run_id = json.loads(r.stdout)["run_id"]
    scored = runner.invoke(cli, [*db, "score", str(run_id), "--json"])
    assert scored.exit_code == 0, scored.output
    data = json.loads(scored.stdout)
    assert data["profile"] == "chainmark" and data["metrics"]["AnswerAcc"] == pytest.approx(200 / 3)
    report = runner.invoke(cli, [*db, "report", str(run_id)])
    assert (
        report.exit_code == 0 and "mine (chainmark): headline metrics" in report.output and "AnswerAcc" in report.output
    )
