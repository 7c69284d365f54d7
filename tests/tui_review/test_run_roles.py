"""Roles decide who may start, resume and cancel runs from the TUI (and so under ``serve``, which runs
the same app as the logged-in person): an annotator is refused in words; a reviewer may."""

from __future__ import annotations

import time
from typing import Any

from annotation.review.annotators import add_annotator
from evaluation.harness import RunSpec, add_endpoint, create_run
from store import session_scope
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.tui_review.conftest import settle
from tests.tui_review.test_runs import _bench
from tui.screens.runs.launcher import LaunchScreen
from tui.screens.runs.manager import run_manager
from tui.screens.runs.monitor import RunMonitorScreen


async def _until(pilot: Any, done: Any, what: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def _people_and_a_run(engine: Any, blobs: Any, base_url: str) -> int:
    _bench(engine, blobs, 2)
    with session_scope(engine, "tester") as s:
        add_annotator(s, "erin", "annotator")
        add_annotator(s, "rev", "reviewer")
        add_endpoint(s, "scripted", base_url, "scripted-model")
        return create_run(s, RunSpec("mme", "scripted", "atomic", concurrency=1)).id


async def test_an_annotator_may_not_launch_resume_or_cancel_runs(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>")) as server:
        run_id = _people_and_a_run(engine, blobs, server.base_url)
        app = make_tui(actor="erin")
        notes: list[str] = []
        async with app.run_test(size=(150, 44)) as pilot:
            await settle(pilot, app)
            app.push_screen(RunMonitorScreen())
            await settle(pilot, app)
            monitor = app.screen
            assert monitor.selected == run_id
            app.notify = lambda message, *a, **k: notes.append(str(message))  # type: ignore[method-assign]
            await pilot.press("r", "f", "c", "n")
            await settle(pilot, app)
            assert app.screen is monitor and not isinstance(app.screen, LaunchScreen)
            manager = run_manager(app)
            assert manager.snapshot() == []  # nothing started
            # a launch that reaches the run manager another way is refused there too
            live = manager.start(RunSpec("mme", "scripted", "atomic"))
            await _until(pilot, lambda: not live.active, "the refused start")
        assert server.chat_requests() == []
    refusal = "erin is an annotator; only reviewers and admins may start, resume or cancel runs"
    assert len([n for n in notes if refusal in n]) == 4, notes
    assert live.state == "failed" and live.run_id is None and refusal in (live.error or "")


async def test_a_reviewer_may_resume_a_run(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>")) as server:
        run_id = _people_and_a_run(engine, blobs, server.base_url)
        app = make_tui(actor="rev")
        async with app.run_test(size=(150, 44)) as pilot:
            await settle(pilot, app)
            app.push_screen(RunMonitorScreen())
            await settle(pilot, app)
            await pilot.press("r")
            manager = run_manager(app)
            await _until(pilot, lambda: manager.snapshot() and not manager.snapshot()[0].active, "the run")
            (live,) = manager.snapshot()
        assert (live.run_id, live.state, live.progress["done"]) == (run_id, "finished", 2)
        assert len(server.chat_requests()) == 2
