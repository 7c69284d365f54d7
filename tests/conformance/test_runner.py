"""The conformance framework itself: the diff, tolerances, and the driver subprocess protocol."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evaluation.conformance import ReferenceError_, compare, run_driver
from evaluation.conformance.runner import RESULT_MARK


def test_compare_reports_metric_and_item_differences_with_tolerances() -> None:
    ours = {"metrics": {"ArgAcc": 50.0, "SummAcc": 70.00001}, "items": {"0": {"a": 1.0}, "1": {"a": 0.0}, "2": {}}}
    ref = {
        "metrics": {"ArgAcc": 50.0, "SummAcc": 70.0, "Missing": 3},
        "items": {"0": {"a": 1}, "1": {"a": 1}},
        "tolerances": {"SummAcc": 1e-4},
    }
    report = compare("gta", ours, ref)
    assert [(m.name, m.equal) for m in report.metrics] == [("ArgAcc", True), ("SummAcc", True), ("Missing", False)]
    assert [(d.item_id, d.metric, d.ours, d.reference) for d in report.items] == [("1", "a", 0.0, 1)]
    assert report.per_metric_items == {"a": {"equal": 1, "different": 1}}
    assert not report.ok and any("'2'" in n or "2" in n for n in report.notes)


def test_compare_without_tolerance_is_exact() -> None:
    report = compare("gta", {"metrics": {"x": 1.00001}}, {"metrics": {"x": 1.0}})
    assert not report.ok


def test_run_driver_reads_the_marked_line_and_reports_failures(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text(f"print('noise')\nprint({RESULT_MARK!r} + '{{\"metrics\": {{\"x\": 1}}}}')\n", encoding="utf-8")
    assert run_driver(sys.executable, good, []) == {"metrics": {"x": 1}}
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.stderr.write('reference exploded\\n')\nsys.exit(3)\n", encoding="utf-8")
    with pytest.raises(ReferenceError_, match="(?s)exited with 3.*reference exploded"):
        run_driver(sys.executable, bad, [])
