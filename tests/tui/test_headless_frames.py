"""Pilot tests skip the frames a headless app throws away (``tests/support/headless_render.py``): the
screens they reach are the same, and a widget that fails to draw still fails its test."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from annotation import tasks as authoring
from store import session_scope
from tests.support import headless_render
from tests.tui.conftest import settle
from tests.tui.test_authoring_forms import until
from tui.screens.task_editor import TaskEditorScreen
from tui.screens.task_list import TaskListScreen


class _Drawn(Static):
    """Counts its renders; fails to draw once told to."""

    DEFAULT_CSS = "_Drawn { width: 12; height: 1; }"
    renders = 0
    broken = False

    def render(self):  # type: ignore[no-untyped-def]
        type(self).renders += 1
        if self.broken:
            raise RuntimeError("this widget cannot draw")
        return "drawn"


class _OneWidget(App[None]):
    def compose(self) -> ComposeResult:
        yield _Drawn()


async def test_frames_are_skipped_but_a_widget_that_fails_to_draw_still_fails_its_test() -> None:
    app = _OneWidget()
    with pytest.raises(RuntimeError, match="cannot draw"):
        async with app.run_test(size=(40, 5)) as pilot:
            await pilot.pause()
            widget = app.query_one(_Drawn)
            assert _Drawn.renders == 0  # no frame was drawn while the test ran
            widget.broken = True
            widget.refresh()
            await pilot.pause()
    assert _Drawn.renders == 1  # the end-of-test render drew the screen once, and failed


async def _task_editor_screenshot(make_tui) -> str:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TaskListScreen))
        await settle(pilot, app)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TaskEditorScreen) and app.screen.detail is not None)
        await settle(pilot, app)
        await pilot.press("tab", *"kept")
        await settle(pilot, app)
        return app.export_screenshot()


async def test_the_screen_reached_is_the_same_with_every_frame_drawn(  # type: ignore[no-untyped-def]
    make_tui, engine, monkeypatch
) -> None:
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        for i in range(3):
            authoring.create_task(s, "gta", f"Receipt question {i}", category="count")
    skipped = await _task_editor_screenshot(make_tui)
    headless_render.draw_every_frame(monkeypatch)  # as in a terminal
    drawn = await _task_editor_screenshot(make_tui)
    assert "Receipt&#160;question&#160;0" in skipped and skipped == drawn
