"""``bench/bench_harness.py --whole`` times the real ``chainmark run`` process from exec to exit: its
ratio, start-up and teardown must be computed from the right instants, on a run that really ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_harness import repeat_summary, whole_figures

ROOT = Path(__file__).resolve().parents[2]


def test_figures_split_the_wall_time_into_startup_loop_and_teardown() -> None:
    out = whole_figures(
        tasks=65,
        concurrency=32,
        rounds=2,
        latency=0.5,
        started=100.0,
        exited=104.5,
        first_call=100.75,
        last_call=103.5,
        calls=130,
        cpu_s=1.3,
    )
    assert out["ideal_s"] == 3.0  # ceil(65 / 32) = 3 waves × 2 rounds × 0.5 s
    assert out["wall_s"] == 4.5 and out["wall_over_ideal"] == 1.5
    assert out["startup_s"] == 0.75  # exec → the first call reached the server
    assert out["loop_s"] == 3.25  # first call → the last answer left (last call + latency)
    assert out["teardown_s"] == 0.5  # last answer → exit
    assert out["startup_s"] + out["loop_s"] + out["teardown_s"] == out["wall_s"]
    assert out["cpu_ms_per_call"] == 10.0


def test_repeat_summary_gives_medians() -> None:
    runs = [
        {"wall_over_ideal": r, "startup_s": s, "teardown_s": t, "cpu_s": c}
        for r, s, t, c in ((1.3, 0.5, 0.2, 2.0), (1.1, 0.3, 0.1, 1.0), (1.2, 0.4, 0.3, 3.0))
    ]
    out = repeat_summary(runs)
    assert out["runs"] == 3
    assert (out["wall_over_ideal_median"], out["wall_over_ideal_min"], out["wall_over_ideal_max"]) == (1.2, 1.1, 1.3)
    assert (out["startup_s_median"], out["teardown_s_median"], out["cpu_s_median"]) == (0.4, 0.2, 2.0)
    assert "setup_s_median" not in out  # figures the runs do not have are left out


def test_whole_mode_times_a_real_run() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "bench/bench_harness.py", "--whole", "--tasks", "6", "-j", "4", "--latency", "0.05"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert (out["done"], out["failed"], out["status"]) == (6, 0, "done")
    assert out["model_calls"] == 6  # the untimed warm-up run's call is not counted
    assert out["ideal_s"] == 0.1  # two waves of 0.05 s
    assert out["wall_over_ideal"] == pytest.approx(out["wall_s"] / 0.1, abs=0.01)
    assert out["startup_s"] > 0 and out["teardown_s"] > 0
    assert out["loop_s"] >= 0.1 - 0.005  # two waves cannot take less than the ideal
    assert out["startup_s"] + out["loop_s"] + out["teardown_s"] == pytest.approx(out["wall_s"], abs=0.003)
    assert out["cpu_s"] > 0 and out["max_rss_mb"] > 10
