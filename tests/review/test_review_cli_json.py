"""The review commands that change data take --json and then print exactly one JSON document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tui.cli import cli

from .conftest import World


def run_json(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_mutating_review_commands_print_one_json_document(db_path: Path, world: World, tmp_path: Path) -> None:
    assert run_json(db_path, "annotators", "add", "ann") == {"id": 1, "name": "ann", "role": "annotator"}
    run_json(db_path, "annotators", "add", "bob")
    assert run_json(db_path, "annotators", "add", "rev", "--role", "reviewer")["role"] == "reviewer"
    scale = run_json(db_path, "scales", "add", "fs", "--level", "interval", "--values", "0..3")
    assert (scale["name"], scale["level"], scale["values"]) == ("fs", "interval", [0, 1, 2, 3])

    made = run_json(
        db_path,
        "assign",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--run",
        str(world.runs[0]),
        "--annotators",
        "ann,bob",
        "--overlap",
        "2",
    )
    assert made["targets"] == 4 and len(made["assignments"]) == 8

    t0, t1 = world.trajectories[0], world.trajectories[1]
    rated = run_json(
        db_path,
        "rate",
        "--as-annotator",
        "ann",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
        "--value",
        "yes",
    )
    assert (rated["annotator"], rated["target_id"], rated["value"]) == ("ann", t1, "yes")
    labels = tmp_path / "labels.csv"
    labels.write_text(f"annotator,scale,target_kind,target_id,value\nbob,yes-no,trajectory,{t0},no\n", encoding="utf-8")
    imported = run_json(db_path, "rate", "--import", str(labels))
    assert imported["imported"] == 1 and len(imported["ratings"]) == 1

    adjudicated = run_json(
        db_path,
        "adjudicate",
        "--reviewer",
        "rev",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
        "--scale",
        "yes-no",
        "--value",
        "no",
        "--rationale",
        "why",
    )
    assert adjudicated["final_value"] == "no" and rated["id"] in adjudicated["overrides"]["ratings"]
