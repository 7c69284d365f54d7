"""Merge one field two people edited (``annotation.merge``): what only one side changed is merged
already; runs both changed differently sit between markers. The annotator edits the text, keeps
what should stay, and saves with ctrl+s; markers left over (or JSON that does not parse, for an
answer spec) keep the screen open with the reason. Escape goes back to the choice, nothing saved."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from tui.screens.modal import OneAnswerModal
from textual.widgets import Static

from annotation.merge import UnresolvedMerge, merge_values, resolve
from tui.widgets.data_text_area import DataTextArea
from tui.widgets.footer import KeyFooter
from tui.safe_text import data_content


class MergeScreen(OneAnswerModal[Any]):
    """Dismisses with the merged value to save, or ``MergeScreen.CANCELLED``."""

    CANCELLED = object()
    BINDINGS = [
        Binding("ctrl+s", "save", "Save merge", id="merge.save"),
        Binding("escape", "cancel", "Back", id="merge.cancel"),
    ]

    def __init__(self, field: str, base: Any, mine: Any, theirs: Any, who: str) -> None:
        super().__init__(classes="modal")
        self.field, self.like, self.who = field, theirs if theirs is not None else mine, who
        self.merged = merge_values(base, mine, theirs, who=who)

    def compose(self) -> ComposeResult:
        conflicts = self.merged.conflicts
        state = (
            "merged cleanly: check it and save"
            if not conflicts
            else f"{conflicts} place{'s' if conflicts > 1 else ''} both of you changed: between "
            f"'<<<<<<< yours', '=======' and '>>>>>>> {self.who}'s', keep what should stay and delete the markers"
        )
        with Vertical(classes="dialog merge-dialog"):
            yield Static(data_content(f"Merge {self.field} with {self.who}'s edit: {state}."), id="merge-help")
            yield DataTextArea(self.merged.text, id="merge-text", soft_wrap=True)
            yield Static("", id="merge-error", classes="warnings")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#merge-text", DataTextArea).focus()

    def action_save(self) -> None:
        text = self.query_one("#merge-text", DataTextArea).text
        try:
            value = resolve(text, self.like)
        except UnresolvedMerge as problem:
            self.query_one("#merge-error", Static).update(data_content(f"Not saved: {problem}"))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(self.CANCELLED)
