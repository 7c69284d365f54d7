"""Service tools under concurrency: N tasks whose model asks for ImageDescription once (a vision
model behind a scripted OpenAI-compatible server answering after ``--latency`` seconds), then
answers with what it said. Times the real ``chainmark run`` command at -j J and prints its wall
time, the ideal (waves of J × latency), the most vision calls the server saw at once, how many
trajectories are done/failed and how many events mention "database is locked".

Goal (issue 20): 64 × 1 s calls at -j 32 in ≤ 3 s, vision concurrency = J, no "locked", all done.
Needs the test extra (the scripted server uses aiohttp).

    .venv/bin/python bench/bench_service_tools.py [--tasks 64] [--latency 1.0] [-j 32]
"""

from __future__ import annotations

import argparse
import io
import json
import re
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("-j", "--concurrency", type=int, default=32)
    args = ap.parse_args()

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
        started = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tui.cli",
                "run",
                "-b",
                "svc",
                "-e",
                "scripted",
                "-m",
                "atomic",
                "-j",
                str(args.concurrency),
                "--json",
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, sep="\n", file=sys.stderr)
        with session_scope(engine) as s:
            statuses = [t.status for t in s.exec(select(Trajectory)).all()]
            locked = sum("locked" in json.dumps(p) for p in s.exec(select(Event.payload)).all())
        in_run = _elapsed(proc.stdout)
        waves = -(-args.tasks // args.concurrency)
        ideal = waves * args.latency
        print(f"service tools: {args.tasks} x {args.latency:g} s vision calls, -j {args.concurrency}; {NOTE}")
        print(
            f"  chainmark run wall      {wall:.2f} s   (ideal {ideal:.2f} s, ratio {wall / ideal:.2f}; "
            f"includes start-up)"
        )
        print(f"  run itself (its summary) {in_run:.2f} s   (ratio {in_run / ideal:.2f})")
        print(f"  vision calls at once    {vlm.max_in_flight} (of {len(vlm.chat_requests())} calls)")
        print(f"  trajectories            done={statuses.count('done')} failed={statuses.count('failed')}")
        print(f"  events saying 'locked'  {locked}")


if __name__ == "__main__":
    main()
