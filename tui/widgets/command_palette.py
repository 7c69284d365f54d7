"""The app's command palette: Textual's, made safe against paging before its list has a size."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

PAGE_MOVES = frozenset({"page_up", "page_down"})


class GuardedCommandPalette(CommandPalette):
    """PageUp/PageDown pressed while the results are still coming in (the list holds options but has not
    been laid out yet, so it has no lines) made Textual's ``OptionList`` index a line that does not exist,
    and the KeyError closed the whole app. Until the list has a size there is no page to move by, so a page
    key does nothing then; once it has one, Textual's own paging applies."""

    def _action_command_list(self, action: str) -> None:
        if action in PAGE_MOVES and not self.query_one(CommandList).scrollable_content_region:
            return
        super()._action_command_list(action)
