"""Time the `chainmark` command line as a user meets it: whole processes, from exec to exit, and each
command's start-up, from exec to its first own work. Goal (issue #20): every command starts in
≤ 0.3 s before its own work.

    .venv/bin/python bench/bench_startup.py [--repeat 7]

"First own work" is the first SQL statement the command sends that is not part of opening the
database (``bench/startup_probe.py`` watches for it): everything before it — interpreter, CLI, the
command's module, the store and its tables, the engine, the schema check, reading the command's
arguments — is start-up. ``run``, ``score`` and ``import`` are stopped at that statement (no model
server or big data needed); the listings run to the end, so both figures are printed for them. The
first statement itself is printed once per case, so what was counted can be checked.

Each case runs REPEAT times after one warm-up run (so the file cache is warm, as it is for a user
typing commands); medians and the range of wall times are printed, with the median CPU time (user+sys)
of the child, which moves less with other work on the machine: judge by CPU on a shared machine.
`python -c pass` is the interpreter's own floor.
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
sys.path.insert(0, str(ROOT))
from bench.user_env import NOTE, command_env, speed_note  # noqa: E402  (after the sys.path line)

# The console script users run (this checkout first on PYTHONPATH), else the module.
_SCRIPT = Path(sys.executable).with_name("chainmark")
CHAINMARK = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tui.cli"]
PROBE = [sys.executable, str(ROOT / "bench" / "startup_probe.py")]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of ``cmd``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def to_first_work(args: list[str], env: dict[str, str], stop: bool) -> tuple[float, float, float, float, str]:
    """(wall, CPU to the first own statement, whole wall, whole CPU, the statement) of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".figures") as figures:
        start = time.time()
        wall, cpu = timed([*PROBE, figures.name, *(["--stop"] if stop else []), *args], env)
        text = figures.read()
    if not text:
        raise SystemExit(f"chainmark {' '.join(args)} sent no statement of its own")
    first_cpu, first_at, statement = text.split(" ", 2)
    return float(first_at) - start, float(first_cpu), wall, cpu, statement


def prepare(tmp: Path, env: dict[str, str]) -> dict[str, str]:
    """The demo project, an endpoint nobody answers, a small scored-run fixture and a GTA folder."""
    from bench.gta_gen import write_dataset
    from store import make_engine
    from tests.support.scoring_runs import write_run

    subprocess.run([*CHAINMARK, "demo"], env=env, cwd=ROOT, check=True, capture_output=True)
    subprocess.run(
        [*CHAINMARK, "endpoints", "add", "nobody", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    engine = make_engine(env["CHAINMARK_DB"])
    run_id = write_run(engine, "gta", 200)
    engine.dispose()
    write_dataset(tmp / "gta", 20)
    return {"run": str(run_id), "gta": str(tmp / "gta")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case (default 7)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="chainmark-startup-") as tmp:
        db = str(Path(tmp) / "bench.db")
        env = command_env(CHAINMARK_DB=db)
        print(NOTE)
        print(speed_note())
        os.environ["CHAINMARK_DB"] = db
        made = prepare(Path(tmp), env)
        whole = [
            ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
            ("chainmark --help", [*CHAINMARK, "--help"]),
            ("chainmark tasks --help", [*CHAINMARK, "tasks", "--help"]),
            ("chainmark run --help", [*CHAINMARK, "run", "--help"]),
        ]
        started = [  # (label, arguments, stopped at the first statement?)
            ("benchmarks list", ["benchmarks", "list"], False),
            ("tasks list --json", ["tasks", "list", "--json"], False),
            ("runs list", ["runs", "list"], False),
            ("run (atomic, 1 task)", ["run", "-b", "demo-gta", "-e", "nobody", "-m", "atomic", "--limit", "1"], True),
            ("score (200 trajectories)", ["score", made["run"], "--embedder", "hashing", "--no-write"], True),
            ("import gta (20 tasks)", ["import", "gta", made["gta"], "--benchmark", "startup-gta"], True),
        ]
        print(f"load average {os.getloadavg()[0]:.2f}; {args.repeat} runs per case after one warm-up")
        print(f"{'whole process':34} {'median':>8} {'min':>7} {'max':>7} {'CPU':>7}")
        for label, cmd in whole:
            timed(cmd, env)
            runs = [timed(cmd, env) for _ in range(args.repeat)]
            walls = [w for w, _ in runs]
            cpu = statistics.median(c for _, c in runs)
            print(f"{label:34} {statistics.median(walls):7.3f}s {min(walls):6.3f}s {max(walls):6.3f}s {cpu:6.3f}s")
        print()
        print(f"{'to first own statement':34} {'median':>8} {'min':>7} {'max':>7} {'CPU':>7}   whole: wall, CPU")
        for label, cmd, stop in started:
            to_first_work(cmd, env, stop)
            runs5 = [to_first_work(cmd, env, stop) for _ in range(args.repeat)]
            walls = [r[0] for r in runs5]
            cpu = statistics.median(r[1] for r in runs5)
            tail = "(stopped there)" if stop else f"{statistics.median(r[2] for r in runs5):.3f}s, "
            tail += "" if stop else f"{statistics.median(r[3] for r in runs5):.3f}s"
            print(
                f"chainmark {label:24} {statistics.median(walls):7.3f}s {min(walls):6.3f}s {max(walls):6.3f}s "
                f"{cpu:6.3f}s   {tail}"
            )
            print(f"    first statement: {runs5[0][4]}")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
