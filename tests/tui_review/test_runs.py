"""Run launcher and monitor: a run started from the form against the scripted server finishes,
can be cancelled and resumed, and keeps going when the monitor is left."""

from __future__ import annotations

import time
from typing import Any

from sqlmodel import select
from textual.widgets import Input, Select

from annotation import tasks as authoring
from evaluation.harness import add_endpoint
from store import session_scope
from store.models import Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.tui_review.conftest import png, settle
from tui.screens.home import HomeScreen
from tui.screens.runs.launcher import LaunchScreen
from tui.screens.runs.manager import run_manager
from tui.screens.runs.monitor import RunMonitorScreen


def _bench(engine, blobs, n: int) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "chainmark", tool_set="agentic-mme")
        for i in range(n):
            t = authoring.create_task(
                s, "mme", f"What colour is it? ({i})", answer_spec={"kind": "contains", "value": "red"}
            )
            authoring.attach_asset(s, blobs, t.id or 0, png())


async def _until(pilot: Any, app: Any, done: Any, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "timed out waiting for the run"
        await pilot.pause(0.1)


async def test_launch_run_and_watch_it_finish(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    _bench(engine, blobs, 4)
    with ScriptedOpenAI(handler=lambda req: text("It is red. <answer>red</answer>"), latency=0.05) as server:
        with session_scope(engine, "tester") as s:
            add_endpoint(s, "scripted", server.base_url, "scripted-model")
        app = make_tui()
        async with app.run_test(size=(150, 44)) as pilot:
            await settle(pilot, app)
            app.push_screen(RunMonitorScreen())
            await settle(pilot, app)
            await pilot.press("n")
            await settle(pilot, app)
            form = app.screen
            assert isinstance(form, LaunchScreen)
            form.query_one("#bench", Select).value = "mme"
            assert form.query_one("#endpoint", Select).value == "scripted"  # the only endpoint is preselected
            form.query_one("#concurrency", Input).value = "2"
            form.query_one("#run-name", Input).value = "from the tui"
            await pilot.press("ctrl+s")
            await pilot.pause()
            monitor = app.screen
            assert isinstance(monitor, RunMonitorScreen)
            live = run_manager(app).snapshot()[0]
            await _until(pilot, app, lambda: not live.active)
            assert live.state == "finished" and live.progress["done"] == 4 and live.progress["failed"] == 0
            table = monitor.query_one("#runs-table")  # the monitor's timer re-reads the table once the run ends
            await _until(pilot, app, lambda: table.row_count == 1 and table.get_row_at(0)[6] == "4/4")
            assert monitor.selected == live.run_id
            assert "done 4" in str(monitor.query_one("#run-stats").render())
            assert monitor.query_one("#run-bar").percentage == 1.0
    with session_scope(engine) as s:
        run = s.exec(select(Run)).one()
        assert (run.name, run.status, run.concurrency) == ("from the tui", "done", 2)
        trajs = s.exec(select(Trajectory)).all()
        assert len(trajs) == 4 and {t.final_answer for t in trajs} == {"red"}


async def test_cancel_then_resume_and_leave_the_screen(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    _bench(engine, blobs, 6)
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>"), latency=0.25) as server:
        with session_scope(engine, "tester") as s:
            add_endpoint(s, "scripted", server.base_url, "scripted-model")
        app = make_tui()
        async with app.run_test(size=(150, 44)) as pilot:
            await settle(pilot, app)
            app.push_screen(RunMonitorScreen())
            await settle(pilot, app)
            await pilot.press("n")
            await settle(pilot, app)
            app.screen.query_one("#bench", Select).value = "mme"
            app.screen.query_one("#concurrency", Input).value = "1"
            await pilot.press("ctrl+s")
            manager = run_manager(app)
            live = manager.snapshot()[0]
            await _until(pilot, app, lambda: live.progress.get("done", 0) >= 1)
            # the monitor has picked up the new run (waiting on the condition, not a fixed time)
            await _until(pilot, app, lambda: getattr(app.screen, "selected", None) == live.run_id)
            await pilot.press("c")
            await _until(pilot, app, lambda: not live.active)
            assert live.progress["status"] == "cancelled" and 1 <= live.progress["done"] < 6
            with session_scope(engine) as s:
                assert s.exec(select(Run)).one().status == "cancelled"
            await pilot.press("r")
            await _until(pilot, app, lambda: manager.snapshot()[-1] is not live)
            resumed = manager.snapshot()[-1]
            assert resumed is not live and resumed.run_id == live.run_id
            await pilot.press("escape")  # leave the monitor: the run goes on
            await settle(pilot, app)
            assert isinstance(app.screen, HomeScreen)
            await _until(pilot, app, lambda: not resumed.active)
            assert resumed.state == "finished"
            assert resumed.progress["skipped"] == live.progress["done"]
    with session_scope(engine) as s:
        trajs = s.exec(select(Trajectory)).all()
        assert len(trajs) == 6 and all(t.status == "done" for t in trajs)  # nothing lost, nothing repeated
        assert s.exec(select(Run)).one().status == "done"


async def test_a_dead_endpoint_stops_the_run_and_the_monitor_says_why(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    import socket

    from evaluation.harness import RunSpec
    from evaluation.harness.client import RetryPolicy

    _bench(engine, blobs, 5)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "dead", f"http://127.0.0.1:{port}/v1", "scripted-model")
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        live = run_manager(app).start(RunSpec("mme", "dead", "atomic", concurrency=1, retry=RetryPolicy(attempts=1)))
        monitor = app.screen
        monitor.follow(live.key)  # what the launcher does for the run it starts
        await _until(pilot, app, lambda: not live.active)
        assert live.progress["status"] == "failed" and live.progress["failed"] == 1
        assert live.error and live.error.startswith("stopped: the endpoint cannot be reached")
        await _until(pilot, app, lambda: monitor.selected == live.run_id)
        await _until(pilot, app, lambda: "cannot be reached" in str(monitor.query_one("#run-errors").render()))
    with session_scope(engine) as s:
        assert s.exec(select(Run)).one().status == "failed"
        assert sorted(t.status for t in s.exec(select(Trajectory)).all()) == ["failed"] + ["pending"] * 4
