"""Time the `chainmark` command line as a user meets it: whole processes, from exec to exit.
Goal: `chainmark --help` and a subcommand's `--help` (everything before the command's own work)
≤ 0.3 s; a quick listing shows what a real command adds on top.

    .venv/bin/python bench/bench_startup.py [--repeat 7]

Each case runs REPEAT times after one warm-up run (so the file cache is warm, as it is for a user
typing commands); the median and the range of wall times are printed, with the median CPU time
(user+sys) of the child, which moves less with other work on the machine. `python -c pass` is the
interpreter's own floor.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The console script users run (this checkout first on PYTHONPATH), else the module.
_SCRIPT = Path(sys.executable).with_name("chainmark")
CHAINMARK = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tui.cli"]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of ``cmd``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case (default 7)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="chainmark-startup-") as tmp:
        db = str(Path(tmp) / "bench.db")
        env = {**os.environ, "CHAINMARK_DB": db, "PYTHONPATH": str(ROOT)}
        subprocess.run([*CHAINMARK, "demo"], env=env, cwd=ROOT, check=True, capture_output=True)
        cases = [
            ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
            ("chainmark --help", [*CHAINMARK, "--help"]),
            ("chainmark tasks --help", [*CHAINMARK, "tasks", "--help"]),
            ("chainmark run --help", [*CHAINMARK, "run", "--help"]),
            ("chainmark benchmarks list", [*CHAINMARK, "benchmarks", "list"]),
            ("chainmark tasks list --json", [*CHAINMARK, "tasks", "list", "--json"]),
        ]
        print(f"load average {os.getloadavg()[0]:.2f}; {args.repeat} runs per case after one warm-up")
        print(f"{'case':32} {'median':>8} {'min':>7} {'max':>7} {'CPU':>7}")
        for label, cmd in cases:
            timed(cmd, env)
            runs = [timed(cmd, env) for _ in range(args.repeat)]
            walls = [w for w, _ in runs]
            cpu = statistics.median(c for _, c in runs)
            print(f"{label:32} {statistics.median(walls):7.3f}s {min(walls):6.3f}s {max(walls):6.3f}s {cpu:6.3f}s")


if __name__ == "__main__":
    main()
