"""Service tools under concurrency: N tasks whose model asks for ImageDescription once (a vision
model behind a scripted OpenAI-compatible server answering after ``--latency`` seconds), then
answers with what it said. Times the real ``chainmark run`` command at -j J and prints its wall
time, the ideal (waves of J × latency), the most vision calls the server saw at once, how many
trajectories are done/failed and how many events mention "database is locked".

Also the mean time of a vision call as the tool saw it, for the first wave of calls (which pays for
whatever the run's first service call sets up) and the later ones.

Goal (issue 20): 64 × 1 s calls at -j 32 in ≤ 3 s, vision concurrency = J, no "locked", all done.
Needs the test extra (the scripted server uses aiohttp).

    .venv/bin/python bench/bench_service_tools.py [--tasks 64] [--latency 1.0] [-j 32] [--repeat 1]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.user_env import NOTE, command_env  # noqa: E402  (after the sys.path line)


def _png(i: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (i % 256, (i * 7) % 256, (i * 13) % 256)).save(buf, "PNG")
    return buf.getvalue()


def _model_turn(req):  # type: ignore[no-untyped-def]
    from tests.support.scripted_openai import text, tool_calls

    tool_msgs = [m for m in req.messages if m.get("role") == "tool"]
    if not tool_msgs:
        return tool_calls(("ImageDescription", {"image": "0"}))
    match = re.search(r"shade-(\d+)", tool_msgs[-1]["content"])
    return text(f"<answer>{match.group(1) if match else 'ERROR'}</answer>")


def _elapsed(stdout: str) -> float:
    """The run's own time from its ``--json`` summary (one JSON document; older versions printed the
    run id on a line before it); NaN when it is not there."""
    for text in (stdout, stdout.split("\n", 1)[-1]):
        try:
            return float(json.loads(text)["elapsed"])
        except (ValueError, KeyError, TypeError):
            continue
    return float("nan")


def _one_run(args: argparse.Namespace) -> dict[str, float]:
    """One fresh database (a second run on the same one would answer from the replay cache), one
    timed ``chainmark run``; its figures."""
    from sqlmodel import select

    from annotation import tasks as authoring
    from evaluation.harness import add_endpoint
    from store import make_engine, session_scope
    from store.blobs import FolderBlobStore
    from store.migrate import upgrade
    from store.models import Event, Trajectory
    from tests.support.scripted_openai import ScriptedOpenAI, text

    def vlm_turn(req):  # type: ignore[no-untyped-def]
        return text(f"An image, shade-{len(req.images()[0]) % 100000}.")

    work = Path(tempfile.mkdtemp(prefix="bench-service-"))
    db = work / "bench.db"
    engine = make_engine(db)
    upgrade(engine)
    blobs = FolderBlobStore(work / "bench.db.blobs")
    with ScriptedOpenAI(handler=_model_turn) as model, ScriptedOpenAI(handler=vlm_turn, latency=args.latency) as vlm:
        with session_scope(engine, "bench") as s:
            authoring.ensure_benchmark(s, "svc", "chainmark", tool_set="gta")
            add_endpoint(s, "scripted", model.base_url, "scripted-model", params={"temperature": 0})
            for i in range(args.tasks):
                t = authoring.create_task(s, "svc", f"Describe image {i}", answer_spec={"kind": "none"})
                authoring.attach_asset(s, blobs, t.id, _png(i), original_path=f"image/image_{i}.png")
        env = command_env(CHAINMARK_DB=str(db), CHAINMARK_VLM_BASE_URL=vlm.base_url, CHAINMARK_VLM_MODEL="scripted-vlm")
        command = [sys.executable, "-m", "tui.cli", "run", "-b", "svc", "-e", "scripted", "-m", "atomic"]
        started = time.perf_counter()
        proc = subprocess.run(
            [*command, "-j", str(args.concurrency), "--json"], env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, sep="\n", file=sys.stderr)
        with session_scope(engine) as s:
            statuses = [t.status for t in s.exec(select(Trajectory)).all()]
            locked = sum("locked" in json.dumps(p) for p in s.exec(select(Event.payload)).all())
            spans = sorted(
                (e.started_at, (e.finished_at - e.started_at).total_seconds())
                for e in s.exec(select(Event).where(Event.kind == "tool_result")).all()
                if e.started_at is not None and e.finished_at is not None
            )
        first, rest = spans[: args.concurrency], spans[args.concurrency :]
        engine.dispose()
        return {
            "wall": wall,
            "run": _elapsed(proc.stdout),
            "at_once": vlm.max_in_flight,
            "calls": len(vlm.chat_requests()),
            "done": statuses.count("done"),
            "failed": statuses.count("failed"),
            "locked": locked,
            "wave1": statistics.mean(d for _, d in first) if first else float("nan"),
            "wave2": statistics.mean(d for _, d in rest) if rest else float("nan"),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("-j", "--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=1, help="runs, each on a fresh database; medians printed")
    args = ap.parse_args()

    runs = [_one_run(args) for _ in range(max(1, args.repeat))]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    waves = -(-args.tasks // args.concurrency)
    ideal = waves * args.latency
    print(f"service tools: {args.tasks} x {args.latency:g} s vision calls, -j {args.concurrency}; {NOTE}")
    print(f"  runs                     {len(runs)} (medians; every run on a fresh database)")
    walls = ", ".join(f"{r['wall']:.2f}" for r in runs)
    print(
        f"  chainmark run wall       {med['wall']:.2f} s   (ideal {ideal:.2f} s, ratio {med['wall'] / ideal:.2f}; "
        f"includes start-up; runs: {walls})"
    )
    print(f"  run itself (its summary) {med['run']:.2f} s   (ratio {med['run'] / ideal:.2f})")
    print(f"  vision call, as a tool   first wave {med['wave1']:.3f} s, later {med['wave2']:.3f} s")
    print(f"  vision calls at once     {med['at_once']:g} (of {med['calls']:g} calls)")
    print(f"  trajectories             done={med['done']:g} failed={med['failed']:g}")
    print(f"  events saying 'locked'   {med['locked']:g}")


if __name__ == "__main__":
    main()
