"""Pilot tests skip the frames Textual draws only to throw away.

Under ``run_test`` the app is headless: every refresh still renders the changed part of the screen and
then discards it (``App._display`` writes nothing without a terminal). That rendering was about a
quarter of the CPU of the Pilot tests, which are most of the suite's time. Tests read what is drawn
through ``export_screenshot`` (snapshots: a full render, kept) or a widget's ``render_lines``
(``drawn``), never through those frames. Measured on the TUI tests (351, two workers, idle machine):
1,137 s of test time became 941 s (-17 %).

What the frames do besides drawing: they catch a widget that fails to draw, and a widget that loads
what it draws (the task table fetches the pages of the rows on screen) loads there. So each app still
renders its whole screen once at the end of its test (a crash there fails the test as before), and tests
marked ``renders`` draw every frame: the monkey walks, hostile data, and the lists that load as drawn.
``CHAINMARK_TEST_RENDER=1`` draws every frame in every test (the plain path).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

SWITCH = "CHAINMARK_TEST_RENDER"
_ORIGINALS: dict[str, tuple[Any, Any]] = {}  # Textual's own methods, taken before the first patch


def every_frame_wanted(item: pytest.Item) -> bool:
    return os.environ.get(SWITCH) == "1" or item.get_closest_marker("renders") is not None


def skip_discarded_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Partial updates are cleared instead of drawn; full renders (screenshots) and the end-of-test
    render still draw. Applies to apps the test runs headless in this process only."""
    from textual._compositor import Compositor
    from textual.app import App

    render_update, run_test = _ORIGINALS.setdefault("frames", (Compositor.render_update, App.run_test))

    def cleared_or_full(self: Compositor, full: bool = False, screen_stack: Any = None, simplify: bool = False) -> Any:
        if full:
            return render_update(self, full=True, screen_stack=screen_stack, simplify=simplify)
        self._dirty_regions.clear()
        return None

    monkeypatch.setattr(Compositor, "render_update", cleared_or_full)
    monkeypatch.setattr(App, "run_test", _rendered_at_the_end(run_test))


def draw_every_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo ``skip_discarded_frames`` for the rest of the test (to compare the two)."""
    from textual._compositor import Compositor
    from textual.app import App

    if "frames" in _ORIGINALS:
        render_update, run_test = _ORIGINALS["frames"]
        monkeypatch.setattr(Compositor, "render_update", render_update)
        monkeypatch.setattr(App, "run_test", run_test)


def _rendered_at_the_end(run_test: Callable[..., Any]) -> Callable[..., Any]:
    @asynccontextmanager
    async def run_and_render_last(app: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with run_test(app, *args, **kwargs) as pilot:
            yield pilot
            if app.is_running and app.screen.is_attached:
                app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)

    return run_and_render_last
