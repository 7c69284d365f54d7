"""The screens' header: Textual's, made safe against a screen that is closed before it has finished opening."""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widget import Widget
from textual.widgets import Header as TextualHeader
from textual.widgets._header import HeaderTitle


class Header(TextualHeader):
    """A screen opened and closed by keys typed together (``m`` then ``escape`` on home) is taken down while
    its header's title update is still queued; Textual's update then looked for a title the removal had
    already taken away, and the ``NoMatches`` closed the whole app. A header without its title has nothing
    to update, so that update does nothing; otherwise it is Textual's.

    Textual calls the ``_on_mount`` of every class in the MRO until one prevents the default: this one does
    (so Textual's header never registers its own watchers) after doing what ``Widget``'s would."""

    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()
        Widget._on_mount(self, event)

        async def set_title() -> None:
            try:
                self.query_one(HeaderTitle).update(self.format_title())
            except (NoScreen, NoMatches):
                pass

        self.watch(self.app, "title", set_title)
        self.watch(self.app, "sub_title", set_title)
        self.watch(self.screen, "title", set_title)
        self.watch(self.screen, "sub_title", set_title)
