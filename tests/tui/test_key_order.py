"""Keys land where and in the order they were typed (issue 32): keys that reach the app together (a
fast typist, a paste, a starved process) go to the field focused after the Tab before them, and a
Backspace applies before the letter typed after it (``tui.held_keys.KeyOrder``)."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from tests.tui.conftest import settle
from tests.tui.test_lost_work import _task
from tui.screens.task_editor import TaskEditorScreen


def _burst(app, keys: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Post ``keys`` together, as a terminal delivers what it read in one go."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_text_typed_right_after_tab_lands_in_the_next_field_in_key_order(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
        app.screen.query_one("#meta-category").focus()
        await pilot.pause()
        _burst(app, ["tab", "a", "b", "c", "backspace", "d", "tab", "x", "y", "ctrl+u", "z"])
        await settle(pilot, app)
        values = {name: app.screen.query_one(f"#meta-{name}", Input).value for name in ("category", "intent", "level")}
        # before: {"category": "abcd", "intent": "", ...}: every key went to the field focused before the Tab
        assert values == {"category": "", "intent": "abd", "level": "z"}
        assert app.focused is app.screen.query_one("#meta-level")
