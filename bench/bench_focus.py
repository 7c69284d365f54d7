"""TUI figure: the UI thread's CPU per focus move in the task editor, with every mechanism, and with
`keyed_footer` or `heap_freeze` off.

Every focus move sends a bindings signal, and Textual's footer answers each one by removing,
mounting and restyling all of its keys; the moves also allocate enough for the garbage collector to
run, and a full collection walks every object the app has (unless its startup heap is frozen). Run:

    .venv/bin/python bench/bench_focus.py [--moves 60] [--repeat 3]

Each case runs in a fresh process on the demo project (`chainmark demo`): the app opens headless
(Textual's test driver, 160×48), opens the first task's editor, and presses tab `--moves` times, each
followed by a wait until the app is idle. Printed: CPU per move, footer rebuilds per move, the
collector's time per move and its longest single collection (a stall of the UI thread), the medians of
`--repeat` runs, the cases interleaved so a change in machine speed hits each alike.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_demo(folder: Path) -> Path:
    """The demo project in ``folder`` (the same one `chainmark demo` builds)."""
    from annotation.demo import build_demo as demo
    from store import make_engine, session_scope
    from store.blobs import FolderBlobStore
    from store.migrate import upgrade

    db = folder / "chainmark.db"
    engine = make_engine(db)
    upgrade(engine)
    with session_scope(engine, "bench") as s:
        demo(s, FolderBlobStore(folder / "chainmark.db.blobs"))
    engine.dispose()
    return db


async def walk(db: Path, moves: int) -> dict[str, float]:
    """Open the first task's editor and move the focus ``moves`` times; CPU and rebuilds per move."""
    from textual.widget import Widget
    from textual_image.widget import HalfcellImage

    from store import make_engine
    from tui.app import make_app
    from tui.context import AppContext
    from tui.screens.task_editor import TaskEditorScreen

    rebuilds = 0
    plain_recompose = Widget.recompose

    async def counting(self: Widget) -> None:
        nonlocal rebuilds
        rebuilds += type(self).__name__ == "KeyFooter"
        await plain_recompose(self)

    Widget.recompose = counting  # type: ignore[method-assign]
    collections: list[float] = []
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif measuring:
            collections.append(time.perf_counter() - started[0])

    measuring = False
    gc.callbacks.append(timed)
    engine = make_engine(db)
    app = make_app(AppContext(db=str(db), actor="bench"), image_widget=HalfcellImage, engine=engine)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.push_screen(TaskEditorScreen(1))
        await _idle(pilot, app)
        rebuilds = 0
        measuring = True
        start = time.process_time()
        for _ in range(moves):
            await pilot.press("tab")
            await _idle(pilot, app)
        cpu = time.process_time() - start
        measuring = False
    engine.dispose()
    return {
        "cpu_ms_per_move": 1000 * cpu / moves,
        "rebuilds_per_move": rebuilds / moves,
        "gc_ms_per_move": 1000 * sum(collections) / moves,
        "longest_gc_ms": 1000 * max(collections, default=0.0),
    }


async def _idle(pilot, app) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()


CASES = {"all on": "", "keyed_footer off": "keyed_footer", "heap_freeze off": "heap_freeze"}


def one_case(db: Path, moves: int, plain: str) -> dict[str, float]:
    env = {**os.environ, "CHAINMARK_PLAIN": plain}
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(db), "--moves", str(moves)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(walk(args.child, args.moves))))
        return
    with tempfile.TemporaryDirectory(prefix="chainmark-bench-focus-") as tmp:
        db = build_demo(Path(tmp))
        cases: dict[str, list[dict[str, float]]] = {name: [] for name in CASES}
        for _ in range(args.repeat):
            for name, plain in CASES.items():
                cases[name].append(one_case(db, args.moves, plain))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.moves} tab presses in the task editor, {args.repeat} runs")
    for name, runs in cases.items():
        cpu = statistics.median(r["cpu_ms_per_move"] for r in runs)
        low, high = min(r["cpu_ms_per_move"] for r in runs), max(r["cpu_ms_per_move"] for r in runs)
        rebuilds = statistics.median(r["rebuilds_per_move"] for r in runs)
        gc_ms = statistics.median(r["gc_ms_per_move"] for r in runs)
        longest = statistics.median(r["longest_gc_ms"] for r in runs)
        print(
            f"{name:17} {cpu:6.1f} ms CPU per move ({low:.1f}-{high:.1f}), {rebuilds:.2f} footer rebuilds per move,"
            f" collector {gc_ms:.1f} ms per move, longest collection {longest:.0f} ms"
        )


if __name__ == "__main__":
    main()
