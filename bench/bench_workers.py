"""Distributed runs: N tasks × one call of LATENCY seconds, queued (``chainmark run --queue``) in a
throwaway PostgreSQL cluster and run by 1, 2 and 4 ``chainmark worker`` processes at -j J each,
against the scripted OpenAI-compatible server. Prints, per worker count, wall ÷ ideal where ideal =
the waves of (workers × J) tasks × latency: once for the whole wall time (worker processes' start-up
included) and once for the span from the first claim to the last commit (the work itself).

    .venv/bin/python bench/bench_workers.py [--tasks 2000] [--latency 0.2] [-j 32] [--workers 1,2,4]

Needs the PostgreSQL server binaries (as the tests do). Workers share the machine's cores with the
server, the database and each other: on a 2-core box 4 workers measure contention as much as scaling.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_harness import _serve, colour_tasks  # noqa: E402


def _one(cluster, tmp: Path, args: argparse.Namespace, port: int, workers: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    import sqlalchemy as sa

    from evaluation.harness import workqueue as wq
    from evaluation.harness.runner import _task_ids
    from store import session_scope
    from store.models import Run, Trajectory, TrajectoryClaim

    url = cluster.new_database()
    engine, blobs, run_id = colour_tasks(tmp / f"w{workers}", args.tasks, port, "atomic", args.concurrency, url=url)
    with session_scope(engine, "bench") as s:
        run = s.get(Run, run_id)
        wq.enqueue(s, run_id, _task_ids(s, run))  # type: ignore[arg-type]
    env = {
        **os.environ,
        "CHAINMARK_DB": url,
        "CHAINMARK_BLOBS": str(blobs.root),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [
        sys.executable,
        "-m",
        "tui.cli",
        "worker",
        "--until-empty",
        "-j",
        str(args.concurrency),
        "--run",
        str(run_id),
    ]
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(workers)
    ]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"worker failed: {err.decode()[-2000:]}")
    wall = time.perf_counter() - t0
    claims = TrajectoryClaim.__table__.c  # type: ignore[attr-defined]
    trajs = Trajectory.__table__.c  # type: ignore[attr-defined]
    with session_scope(engine) as s:
        first, last = s.execute(
            sa.select(sa.func.min(claims.claimed_at), sa.func.max(claims.finished_at)).where(claims.run_id == run_id)
        ).one()
        done = s.execute(sa.select(sa.func.count()).where(trajs.run_id == run_id, trajs.status == "done")).scalar()
        status = s.get(Run, run_id).status  # type: ignore[union-attr]
        per_worker = [w.done for w in wq.workers_of(s, run_id)]
    engine.dispose()
    span = (last - first).total_seconds()
    ideal = math.ceil(args.tasks / (workers * args.concurrency)) * args.latency
    return {
        "workers": workers,
        "concurrency": args.concurrency,
        "tasks": args.tasks,
        "done": done,
        "run_status": status,
        "done_per_worker": per_worker,
        "ideal_s": round(ideal, 3),
        "wall_s": round(wall, 3),
        "wall_over_ideal": round(wall / ideal, 3),
        "work_span_s": round(span, 3),
        "work_span_over_ideal": round(span / ideal, 3),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("-j", "--concurrency", type=int, default=32)
    ap.add_argument("--workers", default="1,2,4", help="worker process counts to measure, comma-separated")
    args = ap.parse_args()

    from bench.pg_scaffold import server_and_cluster

    with server_and_cluster(_serve, args.latency, 1) as (cluster, port, tmp):
        for n in (int(w) for w in args.workers.split(",")):
            print(json.dumps(_one(cluster, tmp, args, port, n)), flush=True)


if __name__ == "__main__":
    main()
