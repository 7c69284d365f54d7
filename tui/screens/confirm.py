"""Ask before something the annotator typed is thrown away: "Discard" (d) or "Stay" (escape).

Escape means stay, so a reflexive second escape never loses work; only an explicit ``d`` (or the
button) discards. The question is plain text: user data in it is never read as Rich markup.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from tui.screens.modal import OneAnswerModal
from textual.widgets import Button, Static
from tui.safe_text import data_content
from tui.widgets.footer import KeyFooter


class ConfirmDiscardScreen(OneAnswerModal[bool]):
    """Dismisses with True to discard and leave, False to stay."""

    BINDINGS = [
        Binding("escape", "stay", "Stay", id="confirm_discard.stay"),
        Binding("d", "discard", "Discard", id="confirm_discard.discard"),
    ]

    def __init__(self, question: str, *, discard_label: str = "Discard  d", stay_label: str = "Stay  esc") -> None:
        super().__init__(classes="modal")
        self.question = question
        self.discard_label, self.stay_label = discard_label, stay_label

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            with VerticalScroll(classes="dialog-text"):  # a long question scrolls; the buttons stay in view
                yield Static(data_content(self.question), id="confirm-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.stay_label, id="stay", variant="primary")
                yield Button(self.discard_label, id="discard", variant="error")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    @on(Button.Pressed, "#discard")
    def action_discard(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#stay")
    def action_stay(self) -> None:
        self.dismiss(False)
