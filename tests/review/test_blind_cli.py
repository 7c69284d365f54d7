"""Blind mode in the CLI listings: a person with blind work still to do (``--as NAME``) sees neither
the other raters' values nor the judges' on those targets in `ratings list`, `disagreements`,
`agreement` or `review adjudications`; `runs show` prints no judgements at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from sqlalchemy.engine import Engine

from tui.cli import cli

from .conftest import World


def run(db: Path, who: str, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", who, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def run_json(db: Path, who: str, *args: str) -> Any:
    return json.loads(run(db, who, *args, "--json").stdout)


def test_cli_listings_hold_blind(db_path: Path, engine: Engine, world: World) -> None:
    for name in ("ann", "bob"):
        run(db_path, "admin", "annotators", "add", name)
    run(db_path, "admin", "annotators", "add", "rev", "--role", "reviewer")
    run(
        db_path,
        "admin",
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
    t0, t1 = world.trajectories[0], world.trajectories[1]
    for tid, value in ((t0, "no"), (t1, "no")):
        run(
            db_path,
            "bob",
            "rate",
            "--as-annotator",
            "bob",
            "--scale",
            "yes-no",
            "--target-kind",
            "trajectory",
            "--target-id",
            str(tid),
            "--value",
            value,
            "--comment",
            "bob-secret",
        )
    run(
        db_path,
        "ann",
        "rate",
        "--as-annotator",
        "ann",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t0),
        "--value",
        "yes",
    )
    run(
        db_path,
        "rev",
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
        "rev-secret",
    )

    # ann rated t0, still owes t1: bob's t1 rating, the judges on t1 and the adjudication stay hidden
    mine = run_json(db_path, "ann", "ratings", "list")
    assert {(r["annotator"], r["target"]["id"]) for r in mine} == {("ann", t0), ("bob", t0)}
    assert "hidden" in run(db_path, "ann", "ratings", "list").stderr
    queue = run_json(db_path, "ann", "disagreements", "--scale", "yes-no", "--include-adjudicated")
    assert t1 not in {d["target"]["id"] for d in queue}
    assert run_json(db_path, "ann", "review", "adjudications") == []
    rep = run_json(db_path, "ann", "agreement", "--scale", "yes-no", "--bootstrap", "0")
    assert all(t1 not in [u["id"] for u in r.get("unit_list", [])] for r in rep)
    assert any("hidden" in n for r in rep for n in r["notes"])
    shown = run(db_path, "ann", "runs", "show", str(world.runs[0])).output
    assert "bob-secret" not in shown and "strict" not in shown and "lenient" not in shown

    # someone with nothing blind to do sees it all
    everything = run_json(db_path, "rev", "ratings", "list")
    assert ("bob", t1) in {(r["annotator"], r["target"]["id"]) for r in everything}
    assert t1 in {
        d["target"]["id"]
        for d in run_json(db_path, "rev", "disagreements", "--scale", "yes-no", "--include-adjudicated")
    }
    assert [a["target"]["id"] for a in run_json(db_path, "rev", "review", "adjudications")] == [t1]


def test_study_export_refuses_someone_still_rating_blind(
    db_path: Path, engine: Engine, world: World, tmp_path: Path
) -> None:
    run(db_path, "admin", "annotators", "add", "ann")
    run(
        db_path,
        "admin",
        "assign",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--run",
        str(world.runs[0]),
        "--annotators",
        "ann",
        "--overlap",
        "1",
    )
    refused = CliRunner().invoke(
        cli, ["--db", str(db_path), "--as", "ann", "study", "export", "--format", "md", str(tmp_path / "s.md")]
    )
    assert refused.exit_code == 1 and "to rate blind" in refused.output and not (tmp_path / "s.md").exists()
    run(db_path, "admin", "study", "export", "--format", "md", str(tmp_path / "s.md"))
    assert (tmp_path / "s.md").exists()
