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


def test_gta_driver_stand_ins_answer_find_spec_like_real_modules(tmp_path: Path) -> None:
    """The real sentence-transformers (``--embedder sentence-transformers:…``) makes transformers ask
    ``importlib.util.find_spec('datasets')``; on a stand-in without a spec that raised ValueError and the
    driver crashed. Checked in a child process, since the stand-ins replace modules process-wide."""
    import subprocess

    from evaluation.conformance.runner import DRIVERS

    code = (
        "import importlib.util, sys; sys.path.insert(0, sys.argv[1]); import gta_driver; "
        "gta_driver.install_framework_stand_ins('reference'); "
        "print([importlib.util.find_spec(m) is not None for m in ('datasets', 'opencompass.datasets.base')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(DRIVERS)], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[True, True]"
