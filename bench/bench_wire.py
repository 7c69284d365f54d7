"""Bytes on the wire per image-mode task: an Agentic-MME-style atomic run over 1920×1080 JPEG photos
(``--chart``: PNG bar charts) against the scripted server, the model cropping (zoom 2), rotating and
enhancing before it answers (four requests per task). Prints, per task: what the harness counted as
sent (``usage.sent_bytes``, ``sent_image_bytes``), what the server received, how many images went
out against how many distinct ones exist, and what the replay cache and blob store keep.

Atomic mode resends the whole conversation, earlier images included, every round: the chat API is
stateless and the references (Agentic-MME's atomic runner, VTC-Bench's Qwen-Agent loop) do the same,
so a faithful run has to. The distinct-image figure is the floor no request could go below. Last,
the run's wall and CPU time (tools, PNG encodes, the harness and the scripted server together).

Needs the test extras (the scripted server lives in tests/support).
``.venv/bin/python bench/bench_wire.py [--tasks 4] [--chart]``
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STEPS = [
    ("crop", {"image_index": 0, "bbox_2d": [250, 250, 750, 750], "zoom_scale": 2}),
    ("rotate", {"image_index": 1, "angle": 15}),
    ("enhance", {"image_index": 2, "contrast": 1.4}),
]


def chart() -> np.ndarray:
    """A 1920×1080 bar chart: flat colours, thin grid lines, labels (BGR)."""
    img = np.full((1080, 1920, 3), 255, np.uint8)
    for y in range(100, 1000, 100):
        cv2.line(img, (80, y), (1900, y), (200, 200, 200), 1)
    for k in range(12):
        cv2.rectangle(img, (100 + 150 * k, 1000 - 60 * k), (200 + 150 * k, 1000), (40 + 15 * k, 120, 200 - 10 * k), -1)
        cv2.putText(img, f"{k * 7}%", (100 + 150 * k, 980 - 60 * k), cv2.FONT_HERSHEY_SIMPLEX, 1, (0, 0, 0), 2)
    return img


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--chart", action="store_true", help="a flat bar chart (PNG) instead of a photo (JPEG)")
    opts = parser.parse_args()

    from sqlmodel import select

    from annotation import tasks as authoring
    from bench.bench_tools import make_image
    from evaluation.harness import RunSpec, add_endpoint, create_run, run_blocking
    from store import make_engine, session_scope
    from store.blobs import FolderBlobStore
    from store.migrate import upgrade
    from store.models import Asset, ReplayCache, Trajectory
    from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

    def handler(req):  # type: ignore[no-untyped-def]
        done = sum(1 for m in req.messages if m.get("role") == "assistant")
        return tool_calls(STEPS[done]) if done < len(STEPS) else text("<answer>red</answer>")

    base = chart() if opts.chart else make_image()

    def photo(i: int) -> bytes:
        """Each task its own image (its number drawn on it), as in a real dataset."""
        img = base.copy()
        cv2.putText(img, f"TASK {i}", (700, 500), cv2.FONT_HERSHEY_SIMPLEX, 4, (0, 0, 255), 8)
        if opts.chart:
            return cv2.imencode(".png", img)[1].tobytes()
        return cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()

    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAI(handler=handler) as server:
        engine = make_engine(Path(tmp) / "wire.db")
        upgrade(engine)
        blobs = FolderBlobStore(Path(tmp) / "blobs")
        with session_scope(engine, "bench") as s:
            authoring.ensure_benchmark(s, "wire", tool_set="agentic-mme")
            for i in range(opts.tasks):
                t = authoring.create_task(
                    s, "wire", f"What colour? ({i})", answer_spec={"kind": "contains", "value": "red"}
                )
                authoring.attach_asset(s, blobs, int(t.id or 0), photo(i))
            add_endpoint(s, "scripted", server.base_url, "scripted-model")
            run_id = int(create_run(s, RunSpec("wire", "scripted", "atomic", concurrency=2)).id or 0)
        load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        progress = run_blocking(engine, blobs, run_id)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu  # the server's threads included
        assert (progress.done, progress.failed) == (opts.tasks, 0), progress

        with session_scope(engine) as s:
            usages = [t.usage for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()]
            rows = s.exec(select(ReplayCache).where(ReplayCache.kind == "model")).all()
            tool_rows = s.exec(select(ReplayCache).where(ReplayCache.kind == "tools")).all()
            stored = sum(a.size or 0 for a in s.exec(select(Asset)).all())
        received = server.chat_requests()
        sent_urls = [u for r in received for u in r.images()]
        distinct = {hashlib.sha256(base64.b64decode(u.split(",", 1)[1])).hexdigest(): len(u) for u in sent_urls}

    per_task = statistics.mean(u.get("sent_bytes", 0) for u in usages)
    images_per_task = statistics.mean(u.get("sent_image_bytes", 0) for u in usages)
    print(
        f"{opts.tasks} tasks × {len(STEPS) + 1} requests, 1920×1080 {'PNG chart' if opts.chart else 'JPEG photo'}"
        f" input ({len(photo(0)) / 1e6:.2f} MB), atomic mode"
    )
    print(f"sent per task (harness count)    {per_task / 1e6:8.2f} MB, images {images_per_task / 1e6:.2f} MB")
    print(f"received per task (server)       {sum(r.size for r in received) / opts.tasks / 1e6:8.2f} MB")
    print(
        f"images sent per task             {len(sent_urls) / opts.tasks:8.1f} (distinct {len(distinct) / opts.tasks:.1f})"
    )
    print(f"distinct image data per task     {sum(distinct.values()) / opts.tasks / 1e6:8.2f} MB base64 (the floor)")
    sizes = [len(json.dumps(r.request)) for r in rows]
    print(
        f"replay cache: {len(rows)} model rows, mean {statistics.mean(sizes) / 1e3:.1f} kB, max {max(sizes) / 1e3:.1f} kB"
        " (images named by sha256, 71 bytes each)"
    )
    tools = [len(json.dumps(r.response)) for r in tool_rows]
    print(
        f"              {len(tool_rows)} tool-list row(s): each trajectory upserts the same key, {max(tools, default=0) / 1e3:.1f} kB"
    )
    print(f"blob store: {stored / 1e6:.2f} MB of assets for the whole run (each image once)")
    print(
        f"the run: {wall:.2f} s wall, {cpu:.2f} s CPU (this process, scripted server included) for"
        f" {opts.tasks * len(STEPS)} tool calls; load average {load:.2f}"
    )


if __name__ == "__main__":
    main()
