"""VTC-Bench against its own scorer, run from a checkout: set ``CHAINMARK_REFERENCE_VTC`` to the VTC-Bench
checkout and ``CHAINMARK_REFERENCE_VTC_PYTHON`` (or ``CHAINMARK_REFERENCE_PYTHON``) to a Python with its
requirements; skipped otherwise."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.conformance.gen_vtc import sets

REFERENCE = os.environ.get("CHAINMARK_REFERENCE_VTC")
PYTHON = os.environ.get("CHAINMARK_REFERENCE_VTC_PYTHON") or os.environ.get("CHAINMARK_REFERENCE_PYTHON")
pytestmark = pytest.mark.skipif(not REFERENCE, reason="CHAINMARK_REFERENCE_VTC (a VTC-Bench checkout) is not set")


def test_generated_set_scores_equal_the_reference_per_item(db_path, tmp_path: Path) -> None:
    from tui.cli import cli

    (s,) = sets(tmp_path / "gen", 300)
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "vtc", str(s["dataset"])], env=env).exit_code == 0
    out = runner.invoke(cli, ["import-run", "vtc", str(s["run"]), "-b", "vtc", "--json"], env=env)
    assert out.exit_code == 0, out.output
    cmd = ["conformance", "vtc", str(json.loads(out.output)["run_id"]), "--reference", REFERENCE, "--json"]
    out = runner.invoke(cli, cmd + (["--python", PYTHON] if PYTHON else []), env=env)
    assert out.exit_code == 0, out.output[-3000:]
    report = json.loads(out.output)
    assert report["ok"] and report["items"] == []
    assert report["items_compared"] == report["items_equal"] == 300 * 2  # rule and final for every task
    assert {m["name"] for m in report["metrics"]} >= {"APR", "APR[ocr]", "APR[spatial]"}
