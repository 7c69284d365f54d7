"""Blind mode at every CLI surface (issue 32): the command list is read from the CLI's own click tree,
so a new command is checked here or has to be exempted by name, with the reason.

erin still owes blind preferences between runs 1 and 17 and a blind rating of trajectory 1: no model
or endpoint name, judge verdict or score of those runs may reach her, and what is withheld says so
in one line. A reviewer with nothing pending, and erin once she has finished, see them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from sqlalchemy.engine import Engine

from tests.support.blind_scenario import RUN_GOOD, RUN_MID, SECRETS, Scenario, finish_erin, seed_blind_scenario
from tui.cli import _register_commands, cli

# command path -> argument lists to run it with ({traj}, {item}, {task}, {out} are filled in) and a
# secret an unblinded viewer sees there (None: the surface shows none to anyone)
SURFACES: dict[str, tuple[list[list[str]], str | None]] = {
    "runs list": ([[], ["--json"]], "ep-good"),
    "runs show": ([[str(RUN_MID)], [str(RUN_GOOD), "--json"]], "ep-good"),
    "compare": ([[str(RUN_MID), str(RUN_GOOD)], [str(RUN_MID), str(RUN_GOOD), "--json"]], "gpt-good"),
    "score": ([[str(RUN_MID)], [str(RUN_MID), "--json", "--per-item", "--no-write"]], "gpt-mid"),
    "report": (
        [
            [str(RUN_MID), str(RUN_GOOD)],
            [str(RUN_MID), str(RUN_GOOD), "--format", "html"],
            [str(RUN_MID), str(RUN_GOOD), "--format", "csv"],
        ],
        "gpt-good",
    ),
    "prefs leaderboard": ([[], ["--json"]], "ep-good"),
    # refused whole while erin owes blind work: judge-vs-human numbers hold every rating
    "estimate": ([[str(RUN_MID), "--judge", "judge-x"], [str(RUN_MID), "--judge", "judge-x", "--json"]], None),
    "calibration": ([[str(RUN_MID), "--judge", "judge-x"]], None),
    "review plan": ([[str(RUN_MID), "--judge", "judge-x", "--budget", "2", "--annotators", "erin", "--dry-run"]], None),
    "prefs agreement": ([[], ["--json"]], None),
    "prefs queue": ([["--annotator", "erin"], ["--annotator", "erin", "--json"]], None),
    "prefs show": ([["{item}", "--annotator", "erin"], ["{item}", "--annotator", "erin", "--json"]], None),
    "agreement": ([[], ["--json"]], None),
    "disagreements": ([[], ["--json"]], None),
    "ratings list": ([[], ["--json"]], None),
    "review adjudications": ([[], ["--json"]], None),
    "review queue": ([["--annotator", "erin"], ["--annotator", "erin", "--json"]], None),
    "review view": (
        [
            [
                "--annotator",
                "erin",
                "--scale",
                "yes-no",
                "--target-kind",
                "trajectory",
                "--target-id",
                "{traj}",
                "--json",
            ]
        ],
        None,
    ),
    "export-run": ([["gta", str(RUN_MID), "{out}"]], None),
    "study export": ([["{out}"]], None),
    "tasks list": ([[], ["--json"]], None),
    "tasks show": ([["{task}"], ["{task}", "--json"]], None),
    "tasks history": ([["{task}"]], None),
    "tasks queue": ([["--annotator", "erin"]], None),
    "benchmarks list": ([[], ["--json"]], None),
    "annotators list": ([[], ["--json"]], None),
    "scales list": ([[]], None),
    "judges list": ([[]], None),
}

EXEMPT: dict[str, str] = {
    "endpoints list": "lists the endpoints configured, not which run used which (runs list hides that)",
    "endpoints add": "stores an endpoint the person names",
    "run": "runs a benchmark on the endpoint the person names",
    "runs cancel": "changes a run's state; prints its id",
    "worker": "executes queued work; prints counts",
    "judge": "asks a judge and prints counts, never a verdict",
    "judges import-prompts": "stores judge prompts",
    "rubrics add": "stores the benchmark author's rubric text",
    "rubrics list": "a benchmark's rubric versions: no run, model or verdict",
    "rubrics show": "a rubric's text: no run, model or verdict",
    "conformance": "refused for a hidden run before anything runs (needs a reference evaluator: "
    "test_conformance_and_export_refuse_a_hidden_run)",
    "serve": "serves the TUI as each login (`--as NAME`): the TUI surfaces are checked screen by screen",
    "adjudicate": "a reviewer's write; prints what was given",
    "withdraw-adjudication": "a reviewer's write",
    "assign": "hands out work; prints counts",
    "rate": "stores the person's own rating",
    "prefs add": "stores the person's own judgement",
    "prefs withdraw": "reopens the person's own item",
    "prefs assign": "hands out pairs; prints counts",
    "annotators add": "admin write",
    "annotators set-role": "admin write",
    "annotators token": "prints a login token",
    "benchmarks add": "creates a benchmark",
    "tasks add": "authoring write",
    "tasks edit": "authoring write",
    "tasks status": "authoring write",
    "tasks assign": "authoring queue write",
    "tasks unassign": "authoring queue write",
    "scales add": "creates a scale",
    "import": "imports a dataset (tasks only)",
    "import-run": "imports a run the person holds the files of",
    "export": "writes a benchmark's tasks, no runs",
    "init": "creates or upgrades the schema",
    "demo": "builds the demo project (no runs)",
    "gc": "removes unreferenced files",
    "schema": "prints JSON schemas",
    "config keys": "settings",
    "config show": "settings",
    "config speedups": "settings: the speed mechanisms and whether each is on",
    "tools list": "tool catalogue",
    "tools run": "runs one tool on given images",
    "benchmarks plugins": "lists the installed benchmark kinds",
    "chain add": "authoring write: a reference step",
    "chain final": "authoring write: a reference answer",
    "checkpoints add": "authoring write",
    "checkpoints order": "authoring write",
}


def leaf_commands() -> list[str]:
    """Every runnable command path of the CLI, from its click tree."""
    _register_commands()
    out: list[str] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
        else:
            out.append(" ".join(path))

    walk(cli, [])
    return sorted(out)


def test_every_command_is_a_checked_surface_or_exempt_by_name() -> None:
    commands = set(leaf_commands())
    assert not set(SURFACES) & set(EXEMPT)
    assert commands - set(SURFACES) - set(EXEMPT) == set(), "a new command: add it to SURFACES or EXEMPT"
    assert set(SURFACES) | set(EXEMPT) <= commands, "SURFACES/EXEMPT name a command that no longer exists"


@pytest.fixture
def scenario(engine: Engine) -> Scenario:
    return seed_blind_scenario(engine)


def _fill(args: list[str], sc: Scenario, out: Path) -> list[str]:
    values = {"{traj}": str(sc.trajectory_1), "{item}": str(sc.erin_items[0]), "{task}": str(sc.tasks[0])}
    values["{out}"] = str(out)
    return [values.get(a, a) for a in args]


def invoke(db: Path, who: str, command: str, args: list[str]) -> tuple[str, str]:
    """(stdout, stdout and stderr) of one command run as ``who``."""
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", who, *command.split(), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.stdout, result.stdout + result.stderr


SCORE_KEYS = {"score", "mean", "right", "per_item", "metrics", "by_category", "standings"}


def score_values(doc: Any, path: str = "") -> list[str]:
    """Paths of score-like keys holding a value (a number, a label, a table) anywhere in a JSON document."""
    found: list[str] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in SCORE_KEYS and v not in (None, [], {}) and not (isinstance(v, dict) and not any(v.values())):
                found.append(f"{path}.{k}")
            found += score_values(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += score_values(v, f"{path}[{i}]")
    return found


CASES = [(c, i) for c, (argsets, _) in SURFACES.items() for i in range(len(argsets))]


@pytest.mark.parametrize(("command", "n"), CASES, ids=[f"{c}#{i}" for c, i in CASES])
def test_a_blind_rater_sees_no_model_verdict_or_score(
    db_path: Path, scenario: Scenario, tmp_path: Path, command: str, n: int
) -> None:
    argsets, reveals = SURFACES[command]
    args = _fill(argsets[n], scenario, tmp_path / "out")
    stdout, everything = invoke(db_path, "erin", command, args)
    leaked = [secret for secret in SECRETS if secret in everything]
    assert not leaked, f"{command} {' '.join(args)} shows {leaked} to erin:\n{everything}"
    if "--json" in args and stdout.strip().startswith(("{", "[")):
        assert not (reveals and score_values(json.loads(stdout))), score_values(json.loads(stdout))
    if reveals is not None:  # what was withheld says so, and why
        assert "erin has" in everything or "erin still has" in everything, everything


@pytest.mark.parametrize("command", [c for c, (_, reveals) in SURFACES.items() if reveals])
def test_an_open_reviewer_and_erin_after_finishing_see_them(
    db_path: Path, engine: Engine, scenario: Scenario, tmp_path: Path, command: str
) -> None:
    argsets, reveals = SURFACES[command]
    assert reveals is not None
    shown = [invoke(db_path, "rev", command, _fill(a, scenario, tmp_path / "out"))[1] for a in argsets]
    assert all(_reveals(text) and "pending on run" not in text for text in shown), shown
    assert any(reveals in text for text in shown), shown
    finish_erin(engine, scenario)
    shown = [invoke(db_path, "erin", command, _fill(a, scenario, tmp_path / "out"))[1] for a in argsets]
    assert all(_reveals(text) and "pending on run" not in text for text in shown), shown


def _reveals(text: str) -> bool:
    """Whether the output names a model or an endpoint of the scenario's runs."""
    return any(name in text for name in ("gpt-mid", "gpt-good", "ep-mid", "ep-good"))


def test_conformance_and_export_refuse_a_hidden_run(db_path: Path, scenario: Scenario, tmp_path: Path) -> None:
    for command, args in (
        ("conformance", ["gta", str(RUN_MID), "--reference", str(tmp_path)]),
        ("export-run", ["gta", str(RUN_MID), str(tmp_path / "run.jsonl")]),
    ):
        _, text = invoke(db_path, "erin", command, args)
        assert "refused" in text and f"erin has 1 blind rating and 3 blind preferences pending on run {RUN_MID}" in text
    assert not (tmp_path / "run.jsonl").exists()
