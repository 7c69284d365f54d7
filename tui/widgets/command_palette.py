"""The app's command palette: Textual's, made safe against keys that arrive before its list is there."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

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
