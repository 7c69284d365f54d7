"""`chainmark run --json` prints one JSON document on stdout (the run id is in it); progress and the
run id line go to stderr, so `json.loads(stdout)` works in scripts."""

from __future__ import annotations

import json
from pathlib import Path

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
