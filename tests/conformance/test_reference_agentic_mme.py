"""Agentic-MME against its own ``evaluation/eval_runs_search.py``, run from a checkout: set
``CHAINMARK_REFERENCE_AMME`` to the Agentic-MME checkout and ``CHAINMARK_REFERENCE_AMME_PYTHON`` (or
``CHAINMARK_REFERENCE_PYTHON``) to a Python with its requirements; skipped otherwise."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.conformance.gen_agentic_mme import sets

REFERENCE = os.environ.get("CHAINMARK_REFERENCE_AMME")
PYTHON = os.environ.get("CHAINMARK_REFERENCE_AMME_PYTHON") or os.environ.get("CHAINMARK_REFERENCE_PYTHON")
pytestmark = pytest.mark.skipif(not REFERENCE, reason="CHAINMARK_REFERENCE_AMME (an Agentic-MME checkout) is not set")


def test_generated_set_scores_equal_the_reference_per_item(db_path, tmp_path: Path) -> None:
    from tui.cli import cli

    (s,) = sets(tmp_path / "gen", 300)
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "agentic-mme", str(s["dataset"])], env=env).exit_code == 0
    out = runner.invoke(cli, ["import-run", "agentic-mme", str(s["run"]), "-b", "agentic-mme", "--json"], env=env)
    assert out.exit_code == 0, out.output
    cmd = ["conformance", "agentic-mme", str(json.loads(out.output)["run_id"]), "--reference", REFERENCE, "--json"]
    out = runner.invoke(cli, cmd + (["--python", PYTHON] if PYTHON else []), env=env)
    assert out.exit_code == 0, out.output[-3000:]
    report = json.loads(out.output)
    assert report["ok"] and report["items"] == []
    # every run folder the reference scores (those with a run_meta.json), 8 values each
    assert report["items_compared"] == report["items_equal"] >= 250 * 8
    assert all(m["equal"] for m in report["metrics"]) and len(report["metrics"]) > 50


def test_an_authored_task_exports_as_the_reference_evaluator_reads_it(engine, blobs, db_path, tmp_path: Path) -> None:
    """A task authored in chainmark (chain, linked checkpoints, ground-truth crop, category) exports as a
    task file the reference's own evaluator loads (through a run folder's ``run_meta.json`` task_file) and
    scores a run on as chainmark does."""
    import sys

    from tests.cli.test_cli import run
    from tests.formats.test_agentic_mme_authored import author_task, png

    author_task(engine, blobs)
    run(db_path, "export", "agentic-mme", str(tmp_path / "out"), "-b", "tails")
    (task_file,) = sorted((tmp_path / "out" / "json").glob("*.json"))
    folder = tmp_path / "runs" / task_file.stem
    (folder / "tool_images").mkdir(parents=True)
    (folder / "orig.png").write_bytes(png("white"))
    (folder / "tool_images" / "transformed_image_1.png").write_bytes(png("red", (30, 30)))
    crop = {"ok": "true", "op": "crop", "output_path": "tool_images/transformed_image_1.png"}
    events = [
        {"index": 0, "tool_name": "crop", "raw_tool_name": "crop", "arguments": {"image_index": 0}, "output": crop},
        {"index": 1, "tool_name": "google_search", "arguments": {"query": "airline founded"}, "output": {}},
    ]
    (folder / "tool_use_list.json").write_text(json.dumps(events))
    meta = {"task_id": task_file.stem, "task_file": str(task_file), "mode": "atomic", "effective_tool_calls": 2}
    (folder / "run_meta.json").write_text(json.dumps(meta))
    (folder / "model_answer.txt").write_text("It was founded in 1962.")
    out = run(db_path, "import-run", "agentic-mme", str(tmp_path / "runs"), "-b", "tails", "--json")
    cmd = ["conformance", "agentic-mme", str(json.loads(out.output)["run_id"]), "--reference", str(REFERENCE), "--json"]
    out = run(db_path, *cmd, "--python", PYTHON or sys.executable, ok=False)
    report = json.loads(out.output)
    assert out.exit_code == 0 and report["ok"], out.output[-3000:]
    values = {m["name"]: m["reference"] for m in report["metrics"]}
    # the reference read the task file: its level, its S and V checkpoints, its golden answer
    read = ("L2.total_cases", "total_s_cases", "total_v_cases", "final_answer_accuracy", "tool_usage.crop")
    assert [values[k] for k in read] == [1, 1, 1, 1.0, 1], values
