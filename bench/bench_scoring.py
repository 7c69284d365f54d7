"""Rule-scoring throughput: 10,000 synthetic trajectories per profile (goal: ≤ 2 s each).

Builds plain ``Item``s in memory (GTA end-to-end with whitelist answers, Agentic-MME with code and
answer checkpoints, VTC with MCQ/open answers and tool chains) and times ``profile.score`` with no
judges (judge-only checks count as pending). Prints one line per profile.

    .venv/bin/python bench/bench_scoring.py [N]
    .venv/bin/python bench/bench_scoring.py --command [N] [--db PATH] [--repeat R] [--only agentic-mme]

``--command`` times what a user waits for instead: the real ``chainmark score RUN`` in its own
process (start-up, loading the run from the database, scoring, writing CheckpointResult rows) on a
database with one generated N-trajectory run per profile (built once with Core bulk inserts and
kept at ``--db`` if given; goal for 10k: ≤ 2 s). Prints wall time, CPU and peak memory per profile,
with and without ``--no-write`` (medians of ``--repeat`` runs; each run's own peak from its rusage,
the command started by a small process so that this script's own memory is not counted in it).
Needs the test extra (the generator lives in tests/support).
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.user_env import NOTE, command_env, speed_note  # noqa: E402  (after the sys.path line)
from evaluation.benchmarks import get_profile  # noqa: E402  (after the sys.path line)
from evaluation.benchmarks.base import ScoreContext  # noqa: E402  (after the sys.path line)
from evaluation.scoring.embedding import HashingEmbedder  # noqa: E402  (after the sys.path line)
from evaluation.scoring.items import NoJudges  # noqa: E402  (after the sys.path line)

# The same generated items the tests score (the test extra, as this script's docstring says).
from tests.support.scoring_runs import amme_item, gta_item, vtc_item  # noqa: E402


def command_mode(n: int, db: Path | None, repeat: int = 1, only: list[str] | None = None) -> None:
    from store import make_engine
    from store.migrate import upgrade
    from tests.support.scoring_runs import PROFILES, write_run

    db = db or Path(tempfile.mkdtemp(prefix="bench-score-")) / "score.db"
    engine = make_engine(db)
    upgrade(engine)
    runs = {}
    with engine.connect() as c:
        for profile in PROFILES:
            row = c.execute(
                sa.text(
                    "SELECT r.id, COUNT(t.id) FROM run r JOIN benchmark b ON b.id = r.benchmark_id "
                    "JOIN trajectory t ON t.run_id = r.id WHERE b.name = :n GROUP BY r.id"
                ),
                {"n": f"gen-{profile}"},
            ).first()
            runs[profile] = row[0] if row and row[1] == n else None
    for profile, run_id in runs.items():
        if run_id is None:
            t0 = time.perf_counter()
            runs[profile] = write_run(engine, profile, n)
            print(f"generated {profile}: {n} trajectories in {time.perf_counter() - t0:.1f} s")
    engine.dispose()
    env = command_env(CHAINMARK_DB=str(db))
    print(NOTE)
    print(speed_note())
    print(f"load average {os.getloadavg()[0]:.2f}; {repeat} run(s) per case, medians (range of wall times)")
    for profile, run_id in runs.items():
        if only and profile not in only:
            continue
        for extra in ([], ["--no-write"]):
            argv = [sys.executable, "-m", "tui.cli", "score", str(run_id), "--embedder", "hashing", *extra]
            walls, cpus, peaks = [], [], []
            for _ in range(repeat):
                wall, cpu, peak = timed_child(argv, env)
                walls.append(wall)
                cpus.append(cpu)
                peaks.append(peak)
            print(
                f"chainmark score {profile:12s} {n} trajectories {' '.join(extra) or '(writes results)':16s} "
                f"{statistics.median(walls):.2f} s wall ({min(walls):.2f}–{max(walls):.2f}), "
                f"{statistics.median(cpus):.2f} s CPU, peak {max(peaks):.0f} MB"
            )


# Started by a small fresh process: Linux counts the memory of the process a child was forked from in
# the child's peak (ru_maxrss survives exec), so spawned from this script (which holds the generated
# data) every command "peaked" at this script's size. The starter prints the command's own figures.
_STARTER = """
import os, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - t0
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {wall} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}")
"""


def timed_child(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak resident MB) of one run of the command, from its own rusage."""
    with tempfile.NamedTemporaryFile("r", suffix=".figures") as figures:
        proc = subprocess.run(
            [sys.executable, "-c", _STARTER, figures.name, *argv], env=env, stderr=subprocess.PIPE, text=True
        )
        code, wall, cpu, peak_kb = figures.read().split()
    if proc.returncode != 0 or int(code) != 0:
        print(proc.stderr, file=sys.stderr)
    return float(wall), float(cpu), int(peak_kb) / 1024


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=10_000, help="trajectories per benchmark")
    ap.add_argument("--command", action="store_true", help="time the real `chainmark score` processes")
    ap.add_argument("--db", type=Path, default=None, help="with --command: reuse this database")
    ap.add_argument("--repeat", type=int, default=1, help="with --command: runs per benchmark (medians)")
    ap.add_argument(
        "--only",
        action="append",
        choices=["gta", "agentic-mme", "vtc"],
        help="time only this benchmark (repeatable; default: all three)",
    )
    args = ap.parse_args()
    if args.command:
        command_mode(args.n, args.db, args.repeat, args.only)
        return
    n = args.n
    rng = random.Random(7)
    for name, build, run_mode in (
        ("gta", gta_item, "react"),
        ("agentic-mme", amme_item, "atomic"),
        ("vtc", vtc_item, "atomic"),
    ):
        if args.only and name not in args.only:
            continue
        items = [build(i, rng) for i in range(n)]
        ctx = ScoreContext(mode="faithful", run_mode=run_mode, oracle=NoJudges(), embedder_factory=HashingEmbedder)
        t0, c0 = time.perf_counter(), time.process_time()
        out = get_profile(name).score(items, ctx)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        headline = {k: round(v, 2) for k, v in out.metrics.items() if isinstance(v, float)}
        print(
            f"{name:12s} {n} trajectories scored in {dt:.3f} s wall, {cpu:.3f} s CPU ({n / dt:,.0f}/s); "
            f"pending judgements {out.pending_judgements}; {dict(list(headline.items())[:4])}"
        )


if __name__ == "__main__":
    main()
