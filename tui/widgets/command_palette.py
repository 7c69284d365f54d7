"""The app's command palette: Textual's, made safe against keys that arrive before its list is there."""

from __future__ import annotations

from textual import work
from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches

PAGE_MOVES = frozenset({"page_up", "page_down"})


class GuardedCommandPalette(CommandPalette):
    """PageUp/PageDown pressed while the results are still coming in (the list holds options but has not
    been laid out yet, so it has no lines) made Textual's ``OptionList`` index a line that does not exist,
    and the KeyError closed the whole app. Until the list has a size there is no page to move by, so a page
    key does nothing then; once it has one, Textual's own paging applies. A move typed together with
    ctrl+p arrives before the palette has even composed its list (Textual's lookup of it then closed the
    app too): with no list there is nothing to move."""

    def _action_command_list(self, action: str) -> None:
        lists = self.query(CommandList)
        if not lists:
            return
        if action in PAGE_MOVES and not lists.first().scrollable_content_region:
            return
        super()._action_command_list(action)

    @work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP)
    async def _gather_commands(self, search_value: str) -> None:
        """Textual's search, except when the palette is taken down while it runs (a command chosen with
        Enter while the results still came in): its list is gone then, and the failed lookup closed the
        app. Nothing is left to show the results in, so the search just ends."""
        try:
            await CommandPalette._gather_commands.__wrapped__(self, search_value)  # type: ignore[attr-defined]
        except NoMatches:
            if self.query(CommandList):
                raise
