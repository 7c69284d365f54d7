"""A one-line question in a modal; dismisses with the text (or None on escape)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from tui.screens.modal import OneAnswerModal
from textual.widgets import Input, Label
from tui.safe_text import data_content
from tui.widgets.data_input import DataInput
from tui.widgets.footer import KeyFooter


class PromptScreen(OneAnswerModal[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="modal")
        self.question, self.value, self.placeholder = question, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(data_content(self.question))
            yield DataInput(self.value, placeholder=self.placeholder, id="prompt-input")
        yield KeyFooter()

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
