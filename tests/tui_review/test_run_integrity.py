"""Run integrity in the TUI: `r` pressed twice starts one executor; the monitor follows the newest
session of a run; a run whose executor died shows "interrupted" with the resume command."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any

from textual.widgets import DataTable

from evaluation.harness import RunSpec, add_endpoint, create_run
from store import session_scope
from store.models import Run, RunLease, Task, Trajectory, utcnow
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.tui_review.conftest import settle
from tests.tui_review.test_runs import _bench
from sqlmodel import select

from tui.screens.runs.data import run_rows
from tui.screens.runs.manager import run_manager
from tui.screens.runs.monitor import RunMonitorScreen
from tests.support.must import must


async def _until(pilot: Any, done: Any, what: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def test_resume_pressed_twice_runs_once_and_the_monitor_follows_the_newest_session(
    make_tui, engine, blobs
) -> None:  # type: ignore[no-untyped-def]
    _bench(engine, blobs, 5)
    # The resumed session's replies are slow, so it is still going when the second r arrives even on
    # a busy machine (with fast replies it could finish in between, and then a new session is right).
    slow = {"on": False}
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>", delay=0.7 if slow["on"] else 0.1)) as server:
        with session_scope(engine, "tester") as s:
            add_endpoint(s, "scripted", server.base_url, "scripted-model")
            run_id = create_run(s, RunSpec("mme", "scripted", "atomic", concurrency=1, limit=2)).id
        app = make_tui()
        async with app.run_test(size=(150, 44)) as pilot:
            await settle(pilot, app)
            app.push_screen(RunMonitorScreen())
            await settle(pilot, app)
            monitor = app.screen
            assert monitor.selected == run_id
            manager = run_manager(app)
            await pilot.press("r")
            await _until(pilot, lambda: not manager.snapshot()[0].active, "the first session")
            first = manager.snapshot()[0]
            assert first.progress["done"] == 2
            with session_scope(engine) as s:  # widen the run's fixed set of tasks, then resume it twice in a row
                run = s.get(Run, run_id)
                must(run).config = {**run.config, "task_set": sorted(s.exec(select(Task.id)).all())}
            slow["on"] = True
            await pilot.press("r", "r")
            sessions = manager.snapshot()
            assert len(sessions) == 2  # the second r was refused: the run is still going
            await _until(pilot, lambda: not sessions[-1].active, "the resumed session")
            assert sessions[-1].state == "finished"
            assert len(server.chat_requests()) == 5  # every task asked once
            assert manager.by_run_id(run_id) is sessions[-1]
            await _until(
                pilot,
                lambda: "skipped 2" in str(monitor.query_one("#run-stats").render()),
                "the monitor to show the newest session",
            )


async def test_a_run_whose_executor_died_shows_interrupted(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    _bench(engine, blobs, 1)
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "scripted", "http://127.0.0.1:9/v1", "scripted-model")
        run = s.get(Run, create_run(s, RunSpec("mme", "scripted", "atomic")).id)
        assert run is not None
        run.status = "running"
        now = utcnow()
        s.flush()
        s.add(
            RunLease(
                run_id=must(run.id),
                token="t",
                host=os.uname().nodename,
                pid=2**22 + 7,
                acquired_at=now,
                heartbeat_at=now,
                expires_at=now + timedelta(seconds=600),
            )
        )  # that pid does not exist
        task_id = s.exec(select(Task.id)).one()
        s.add(
            Trajectory(
                run_id=run.id or 0, task_id=task_id or 0, status="running", usage={"api_calls": 1, "step": "tool crop"}
            )
        )
        run_id = run.id
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.get_row_at(0)[5] == "interrupted"
        title = str(app.screen.query_one("#run-title").render())
        assert f"chainmark run --resume {run_id}" in title
    with session_scope(engine) as s:  # what the dead executor last reported is no one's work now
        assert run_rows(s, with_errors_of=run_id)[0].live == []
