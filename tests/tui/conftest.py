"""TUI test fixtures: an app on the test database with half-cell images and no cursor blink."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from sqlalchemy.engine import Engine
from textual.widgets import Input, TextArea
from textual_image.widget import HalfcellImage

from tests.support.workers import wait_for_workers
from tui.app import ChainmarkApp, make_app
from tui.context import AppContext
from tui.screens.base import WorkScreen


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blinking cursors make screenshots depend on timing."""
    monkeypatch.setattr(Input, "cursor_blink", False, raising=False)
    monkeypatch.setattr(TextArea, "cursor_blink", False, raising=False)


def app_on(engine: Engine, db_path: Path, actor: str, **kwargs: Any) -> ChainmarkApp:
    """The app on the test database, drawing images in half cells (the same on every terminal)."""
    return make_app(AppContext(db=str(db_path), actor=actor), image_widget=HalfcellImage, engine=engine, **kwargs)


@pytest.fixture
def make_tui(engine: Engine, db_path: Path) -> Callable[..., ChainmarkApp]:
    def build(actor: str = "tester", **kwargs: Any) -> ChainmarkApp:
        return app_on(engine, db_path, actor, **kwargs)

    return build


def png(width: int = 200, height: int = 120, colour: str = "#3060c0", text: str = "") -> bytes:
    """A small deterministic test image: a coloured field with a white square (and optional text)."""
    im = Image.new("RGB", (width, height), colour)
    draw = ImageDraw.Draw(im)
    draw.rectangle([width // 4, height // 4, width // 2, height // 2], fill="white")
    if text:
        draw.text((8, 8), text, fill="black")
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


async def until(pilot, condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    """Wait for a condition (never a fixed time), failing after ``timeout`` seconds."""
    import time

    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition never held"
        await pilot.pause(0.01)


async def settle(pilot, app: ChainmarkApp) -> None:  # type: ignore[no-untyped-def]
    """Let messages flow and all workers finish, twice (a finished load may start page loads; a load
    replaced by a newer one is cancelled, and counts as finished). A task list's whole list waits for
    a pause in typing: that is waited for too, by its condition."""
    for _ in range(3):
        await pilot.pause()
        await wait_for_workers(app)
    await until(pilot, lambda: not getattr(app.screen, "index_pending", False))
    await wait_for_workers(app)
    await pilot.pause()


async def wait_for_saves(pilot, app: ChainmarkApp, timeout: float = 20.0, by_timer: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Wait until the screen's debounced saves have been made and have landed.

    The saves waiting on a typing pause are made at once (``flush_pending``, as leaving the screen
    makes them): waiting out the pause (0.6 s) in each of some fifty tests was idle time only.
    ``by_timer`` waits for the pause instead, by condition, for the tests of the pause itself."""
    import time

    end = time.monotonic() + timeout
    await settle(pilot, app)  # the edit's Changed message is handled first: it starts the debounce
    if not by_timer and isinstance(app.screen, WorkScreen) and getattr(app.screen, "_pending_saves", None):
        app.screen.flush_pending()
    while getattr(app.screen, "_pending_saves", None):
        assert time.monotonic() < end, "debounced saves never fired"
        await pilot.pause(0.05)
    await settle(pilot, app)
