"""Commands that change data take --json and then print exactly one JSON document on stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tui.cli import cli


def run_json(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_init_demo_and_task_authoring_print_one_json_document(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    first = run_json(db, "init")
    assert first["before"] is None and first["after"] == first["head"]
    assert run_json(db, "init")["before"] == first["head"]
    demo = run_json(db, "demo")
    assert set(demo["created"]) >= {"demo-gta", "demo-vtc"} and demo["created"]["demo-gta"] > 0
    assert sum(run_json(db, "demo")["existing"].values()) == sum(demo["created"].values())

    added = run_json(
        db, "tasks", "add", "-b", "demo-gta", "-q", "How many cups?", "--answer", '{"kind":"exact","value":"3"}'
    )
    assert (added["benchmark"], added["status"], added["revision"]) == ("demo-gta", "draft", 1)
    edited = run_json(db, "tasks", "edit", str(added["id"]), "--query", "How many cups are there?")
    assert (edited["id"], edited["revision"]) == (added["id"], 2)
    assert run_json(db, "tasks", "status", str(added["id"]), "submitted")["status"] == "submitted"

    exported = run_json(db, "export", "gta", str(tmp_path / "out"), "--benchmark", "demo-gta")
    assert exported["tasks"] >= 1 and Path(exported["path"]).exists()


def test_demo_refuses_json_with_open(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db"), "demo", "--open", "--json"])
    assert result.exit_code == 2 and "exclude each other" in result.output


@pytest.mark.parametrize("args", [["tasks", "add", "-b", "nope", "-q", "q"]])
def test_errors_stay_off_stdout_in_json_mode(tmp_path: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db"), *args, "--json"])
    assert result.exit_code != 0 and result.stdout == ""
