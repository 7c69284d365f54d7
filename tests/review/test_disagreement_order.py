"""`chainmark disagreements` lists the largest split first across every scale, as its help says."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy.engine import Engine

from tui.cli import cli

from .conftest import World


def run(db: Path, *args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "rev", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_largest_split_first_across_scales(db_path: Path, engine: Engine, world: World) -> None:
    for name in ("ann", "bob"):
        run(db_path, "annotators", "add", name)
    run(db_path, "scales", "add", "fs", "--level", "interval", "--values", "0..100")  # sorts before yes-no
    t0, t1 = world.trajectories[0], world.trajectories[1]
    for who, fs, yn in (("ann", "50", "yes"), ("bob", "60", "no")):
        run(
            db_path,
            "rate",
            "--as-annotator",
            who,
            "--scale",
            "fs",
            "--target-kind",
            "trajectory",
            "--target-id",
            str(t0),
            "--value",
            fs,
        )
        run(
            db_path,
            "rate",
            "--as-annotator",
            who,
            "--scale",
            "yes-no",
            "--target-kind",
            "trajectory",
            "--target-id",
            str(t1),
            "--value",
            yn,
        )
    items = json.loads(run(db_path, "disagreements", "--between", "human-human", "--json").stdout)
    splits = [d["split"] for d in items]
    assert splits == sorted(splits, reverse=True) and len(splits) >= 2
    assert (items[0]["scale"], items[-1]["scale"]) == ("yes-no", "fs")
