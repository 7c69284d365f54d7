"""What the monkey (test_monkey.py) found, each pinned by the shortest key sequence that showed it."""

from __future__ import annotations

import pytest

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from tests.support.monkey import press_burst
from tests.tui.conftest import settle
from tui.widgets.header import Header

pytestmark = pytest.mark.renders  # a widget that fails to draw is what these walks hunt


class Titled(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("body")


async def test_a_screen_closed_before_it_finished_opening_keeps_the_app() -> None:
    """Textual's header updated its title after the screen's removal had taken the title away (NoMatches):
    a screen pushed and popped in one go closed the app."""
    app: App[None] = App()
    async with app.run_test() as pilot:
        app.push_screen(Titled())
        app.push_screen(Titled())
        app.pop_screen()
        await pilot.pause()
        await pilot.pause()
        assert app.is_running
        assert len(app.screen_stack) == 2


async def test_the_guarded_header_still_shows_the_screen_title() -> None:
    from textual.widgets._header import HeaderTitle

    app: App[None] = App()
    async with app.run_test() as pilot:
        screen = Titled()
        await app.push_screen(screen)
        screen.title, screen.sub_title = "chainmark", "task 7"
        await pilot.pause()
        await pilot.pause()
        shown = str(screen.query_one(HeaderTitle).render())
        assert "chainmark" in shown and "task 7" in shown


async def test_a_page_key_reaching_a_palette_without_its_list_does_nothing(make_tui) -> None:  # type: ignore[no-untyped-def]
    """A page key reached the palette while it was being taken down (its list already removed: seen in the
    walk of MergeScreen seed 1, ``ctrl+p`` ``s`` ``enter`` … ``ctrl+p`` ``pagedown``); the palette's guard
    looked the list up and the NoMatches closed the app."""
    from textual.command import CommandList

    from tui.widgets.command_palette import GuardedCommandPalette

    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await press_burst(pilot, ["ctrl+p"])
        await settle(pilot, app)
        palette = app.screen
        assert isinstance(palette, GuardedCommandPalette)
        await palette.query_one(CommandList).remove()
        palette._action_command_list("page_down")
        palette._action_command_list("cursor_down")
        await settle(pilot, app)
        assert app.is_running
