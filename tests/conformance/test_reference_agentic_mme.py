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
