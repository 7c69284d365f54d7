"""A one-line search field that closes on ``escape`` (instead of letting it leave the screen)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class SearchInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close search", id="search_input.close"),
    ]

    class Closed(Message):
        """The field was closed without searching."""

    def action_close(self) -> None:
        self.post_message(self.Closed())
