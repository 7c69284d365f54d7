"""The run monitor shows per-call progress from the database: a run executed by another process
(another terminal) has its calls, tokens and current step on screen while its trajectory is still
running, not only when it ends."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Any

from evaluation.harness import RetryPolicy, RunSpec, add_endpoint, create_run
from store import session_scope
from store.models import Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, error, text, tool_calls
from tests.tui_review.conftest import settle
from tests.tui_review.test_runs import _bench
from tui.screens.runs.monitor import RunMonitorScreen
from tests.support.must import must

CALLS_BEFORE_GATE = 3


async def _until(pilot: Any, done: Any, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.1)


async def test_monitor_counts_calls_of_a_trajectory_still_running_in_another_process(
    make_tui, engine, blobs, db_path
) -> None:  # type: ignore[no-untyped-def]
    _bench(engine, blobs, 1)
    gate = threading.Event()
    answered: list[int] = []

    def handler(req):  # type: ignore[no-untyped-def]
        if len(answered) < CALLS_BEFORE_GATE:
            answered.append(1)
            return tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 500]}))
        if not gate.is_set():  # the trajectory waits here, still running, until the test has looked
            return error(503, "busy", retry_after=0.05)
        return text("<answer>red</answer>")

    with ScriptedOpenAI(handler=handler, latency=0.05) as server:
        with session_scope(engine, "tester") as s:
            add_endpoint(s, "scripted", server.base_url, "scripted-model")
            run_id = create_run(
                s,
                RunSpec(
                    "mme",
                    "scripted",
                    "atomic",
                    concurrency=1,
                    retry=RetryPolicy(attempts=100000, base_delay=0.05, max_delay=0.1),
                ),
            ).id
        env = {**os.environ, "CHAINMARK_DB": str(db_path)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui.cli", "run", "--resume", str(run_id)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            app = make_tui()
            async with app.run_test(size=(150, 44)) as pilot:
                await settle(pilot, app)
                app.push_screen(RunMonitorScreen())
                await settle(pilot, app)
                monitor = app.screen
                stats = monitor.query_one("#run-stats")
                await _until(
                    pilot,
                    lambda: f"{CALLS_BEFORE_GATE} call(s)" in str(stats.render()),
                    "the monitor to count the calls",
                )
                shown = str(stats.render())
                assert "in flight" in shown and "running 1" in shown
                assert f"model calls {CALLS_BEFORE_GATE}" in shown
                assert "tool crop" in shown or "model call" in shown  # the current step
                with session_scope(engine) as s:
                    assert must(s.get(Trajectory, 1)).status == "running"  # still going while we looked
                gate.set()
                assert proc.wait(timeout=120) == 0
                await _until(pilot, lambda: "done 1" in str(stats.render()), "the finished trajectory")
        finally:
            gate.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
