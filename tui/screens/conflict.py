"""The task changed under the editor (another annotator, another terminal): say who changed what and
let the annotator choose: reload theirs (r, dropping the edit that could not be saved), overwrite
with mine (o), or merge the two (m, ``MergeScreen``). Escape decides nothing: the edit stays in the
form, unsaved."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from tui.screens.modal import OneAnswerModal
from textual.widgets import Button, Static
from tui.safe_text import data_content
from tui.widgets.footer import KeyFooter


class ConflictScreen(OneAnswerModal[str | None]):
    """Dismisses with "reload", "overwrite", "merge" or None."""

    BINDINGS = [
        Binding("escape", "dismiss_none", "Decide later", id="conflict.dismiss_none"),
        Binding("r", "reload", "Reload theirs", id="conflict.reload"),
        Binding("o", "overwrite", "Overwrite with mine", id="conflict.overwrite"),
        Binding("m", "merge", "Merge", id="conflict.merge"),
    ]

    def __init__(self, message: str) -> None:
        super().__init__(classes="modal")
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            with VerticalScroll(classes="dialog-text"):  # long values scroll; the buttons stay in view
                yield Static(data_content(self.message), id="conflict-message")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reload theirs  r", id="reload")
                yield Button("Overwrite with mine  o", id="overwrite", variant="warning")
                yield Button("Merge  m", id="merge", variant="primary")
        yield KeyFooter()

    @on(Button.Pressed, "#reload")
    def action_reload(self) -> None:
        self.dismiss("reload")

    @on(Button.Pressed, "#overwrite")
    def action_overwrite(self) -> None:
        self.dismiss("overwrite")

    @on(Button.Pressed, "#merge")
    def action_merge(self) -> None:
        self.dismiss("merge")

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
