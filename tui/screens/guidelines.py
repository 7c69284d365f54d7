"""The benchmark's annotation guidelines (Markdown): read, and edit with ctrl+s saving them; ctrl+r opens
the benchmark's judge rubric (``tui.screens.rubric``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Markdown, TextArea
from tui.widgets.header import Header

from annotation.tasks import ensure_benchmark, get_benchmark
from tui.typed_keys import after_typed_keys
from tui.undo import Edit
from tui.screens.base import WorkScreen
from tui.widgets.footer import KeyFooter
from tui.widgets.layered_text_area import LayeredTextArea


class GuidelinesScreen(WorkScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="guidelines.back"),
        Binding("ctrl+s", "save_guidelines", "Save", priority=True, id="guidelines.save_guidelines"),
        Binding("ctrl+r", "rubric", "Rubric", tooltip="The judge rubric", priority=True, id="guidelines.rubric"),
    ]

    def __init__(self, benchmark: str, text: str) -> None:
        super().__init__()
        self.benchmark, self.text = benchmark, text
        self._stored = text or ""  # the guidelines as last saved from here: leaving saves an edit beyond it

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="builder-body"):
            yield LayeredTextArea(self.text, language="markdown", id="guidelines-source")
            yield Markdown(self.text, id="guidelines-view")
        yield KeyFooter()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.query_one("#guidelines-view", Markdown).update(event.text_area.text)

    @after_typed_keys
    def action_save_guidelines(self) -> None:
        self._save_guidelines()

    def flush_pending(self) -> None:
        """Leaving (escape, ctrl+q, another screen on top) saves an edit: escape once dropped it unasked."""
        if self.query_one("#guidelines-source", TextArea).text != self._stored:
            self._save_guidelines()

    def _save_guidelines(self) -> None:
        name, text = self.benchmark, self.query_one("#guidelines-source", TextArea).text
        self._stored = text

        def apply(session):  # type: ignore[no-untyped-def]
            bench = get_benchmark(session, name)
            old = bench.guidelines or ""
            ensure_benchmark(session, name, bench.source_format, guidelines=text)
            return Edit(f"guidelines of {name}", "guidelines", {"benchmark": name, "text": old})

        self.save("guidelines", apply)

    def action_rubric(self) -> None:
        """The benchmark's judge rubric (its versions; ctrl+s there saves a new one)."""
        from tui.screens.rubric import RubricScreen

        self.app.push_screen(RubricScreen(self.benchmark))

    def action_back(self) -> None:
        self.leave()
