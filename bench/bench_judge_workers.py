"""Queued judging: a finished VTC run of N open answers (each needs one judge call), queued with
``chainmark judge … --queue`` semantics in a throwaway PostgreSQL cluster and judged by 1 and 2
``chainmark worker --judges-only`` processes at -j J each, against the scripted OpenAI-compatible
server answering every judge question after LATENCY seconds. Prints, per worker count, items/s and
wall ÷ ideal, where ideal = the waves of (workers × J) items × latency: once for the whole wall time
(worker processes' start-up included) and once for the span from the first claim to the last
finished item (the work itself).

    .venv/bin/python bench/bench_judge_workers.py [--items 400] [--latency 0.2] [-j 8] [--workers 1,2]

Needs the PostgreSQL server binaries (as the tests do). Workers share the machine's cores with the
server, the database and each other, so on a small box this measures contention as much as scaling.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

JUDGE = "vtc-open-judge"


def _serve(latency: float, port_out: "mp.Queue[int]") -> None:
    """The judge: "Yes" to every question, after ``latency`` seconds."""
    import gc

    from tests.support.scripted_openai import ScriptedOpenAI, text

    server = ScriptedOpenAI(handler=lambda req: text("Yes"), latency=latency).start()
    gc.freeze()  # the server's own collections are not the workers' time
    port_out.put(server.port)
    while True:
        time.sleep(3600)


def _vtc_run(url: str, items: int, port: int) -> int:
    """A finished VTC run whose answers the rules cannot match (each one is a judge question, each
    different, so none is answered from the replay cache), items queued for the judge at ``port``."""
    from annotation import tasks as authoring
    from evaluation.judges import queue as jq
    from evaluation.judges.runner import check_judge
    from store import make_engine, session_scope
    from store.migrate import upgrade
    from store.models import ModelEndpoint
    from tests.scoring.builders import answer, stored_run, stored_trajectory

    engine = make_engine(url)
    upgrade(engine)
    with session_scope(engine, "bench") as s:
        run = stored_run(s, "vtc-bench", "vtc")
        run.status = "done"
        s.add(ModelEndpoint(name="j", base_url=f"http://127.0.0.1:{port}/v1", model="judge-model"))
        for i in range(items):
            task = authoring.create_task(
                s, "vtc-bench", f"What is written on sign {i}?", answer_spec={"kind": "exact", "value": "forty-two"}
            )
            stored_trajectory(s, run, int(task.id or 0), [answer(f"something else {i}")])
        run_id = int(run.id or 0)
    check_judge(engine, run_id, JUDGE, "j", "faithful", "bench")  # as `judge --queue` does: the judge's row first
    with session_scope(engine, "bench") as s:
        assert jq.enqueue(s, run_id, JUDGE, "j") == items
    engine.dispose()
    return run_id


def _children_cpu() -> float:
    import resource

    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _one(cluster, tmp: Path, args: argparse.Namespace, port: int, workers: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    import sqlalchemy as sa

    from evaluation.judges import queue as jq
    from store import make_engine, session_scope
    from store.models import JudgeClaim

    url = cluster.new_database()
    run_id = _vtc_run(url, args.items, port)
    env = {
        **os.environ,
        "CHAINMARK_DB": url,
        "CHAINMARK_BLOBS": str(tmp / f"blobs{workers}"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [sys.executable, "-m", "tui.cli", "worker", "--judges-only", "--until-empty", "-j", str(args.concurrency)]
    argv += ["--run", str(run_id)]
    cpu0 = _children_cpu()
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
    cpu = _children_cpu() - cpu0  # the worker processes' own CPU (start-up included)
    c = JudgeClaim.__table__.c  # type: ignore[attr-defined]
    engine = make_engine(url)
    with session_scope(engine) as s:
        first, last = s.execute(
            sa.select(sa.func.min(c.claimed_at), sa.func.max(c.finished_at)).where(c.run_id == run_id)
        ).one()
        per_worker = sorted(
            int(n)
            for n in s.execute(sa.select(sa.func.count()).where(c.run_id == run_id).group_by(c.host, c.pid)).scalars()
        )
        (prog,) = jq.progress(s, run_id)  # the numbers `runs show` prints
        errors = {
            str(e)[:120]: int(n)
            for e, n in s.execute(
                sa.select(c.error, sa.func.count()).where(c.run_id == run_id, c.error.is_not(None)).group_by(c.error)
            ).all()
        }
    engine.dispose()
    span = (last - first).total_seconds()
    ideal = math.ceil(args.items / (workers * args.concurrency)) * args.latency
    return {
        "workers": workers,
        "concurrency": args.concurrency,
        "items": args.items,
        "judged": prog.judged,
        "failed": prog.failed,
        "model_calls": prog.model_calls,
        "takeovers": prog.takeovers,
        "errors": errors,
        "items_per_worker": per_worker,
        "worker_cpu_ms_per_item": round(1000 * cpu / args.items, 1),
        "ideal_s": round(ideal, 3),
        "wall_s": round(wall, 3),
        "items_per_s_wall": round(args.items / wall, 1),
        "wall_over_ideal": round(wall / ideal, 3),
        "work_span_s": round(span, 3),
        "items_per_s_span": round(args.items / span, 1),
        "work_span_over_ideal": round(span / ideal, 3),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("-j", "--concurrency", type=int, default=8)
    ap.add_argument("--workers", default="1,2", help="worker process counts to measure, comma-separated")
    args = ap.parse_args()

    from bench.pg_scaffold import server_and_cluster

    with server_and_cluster(_serve, args.latency) as (cluster, port, tmp):
        for n in (int(w) for w in args.workers.split(",")):
            print(json.dumps(_one(cluster, tmp, args, port, n)), flush=True)


if __name__ == "__main__":
    main()
