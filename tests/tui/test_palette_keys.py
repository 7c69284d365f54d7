"""The command palette's page keys pressed while its results are still coming in (issue 32: 27 of 31 monkey
crashes). Textual pages by laid-out lines, and a list that holds options but has no size yet has none."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit

from tests.tui.conftest import settle
from tui.widgets.actions_provider import ScreenActions


@pytest.fixture
def held_results(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """The screen's actions arrive one by one and the search then stays open until the returned event is
    set: the list fills while the palette is not laid out yet (what a busy machine does)."""
    release = asyncio.Event()
    discover = ScreenActions.discover

    async def slow_discover(self: ScreenActions) -> AsyncIterator[DiscoveryHit | Hit]:
        async for hit in discover(self):
            yield hit
        await release.wait()

    monkeypatch.setattr(ScreenActions, "discover", slow_discover)
    monkeypatch.setattr(CommandPalette, "_RESULT_BATCH_TIME", 0)  # every hit shown as it arrives
    return release


@pytest.mark.parametrize("key", ["pageup", "pagedown"])
async def test_page_keys_before_the_list_is_laid_out_keep_the_app(make_tui, held_results, key: str) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        commands = app.screen.query_one(CommandList)
        while not commands.option_count:
            await pilot.pause()
        assert not commands.scrollable_content_region  # the race: options, but no lines yet
        await pilot.press(key, key)
        assert app.is_running
        assert isinstance(app.screen, CommandPalette)
        held_results.set()
        while not commands.scrollable_content_region:
            await pilot.pause()
        await pilot.press("pagedown")  # once laid out, Textual's paging applies
        assert app.is_running
        assert commands.highlighted is not None and commands.highlighted > 0
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CommandPalette)
