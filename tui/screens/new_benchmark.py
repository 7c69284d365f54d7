"""A form to create a benchmark: name, format, tool set, description and guidelines.

The same ``annotation.tasks.create_benchmark`` that ``chainmark benchmarks add`` calls does the work, so the
rules (a name taken or empty, a format or tool set nothing defines) are the same and are shown here in
words, with the typed values kept. The formats come from the benchmark plugins, the tool sets from the
tool-set registry; choosing a format picks the tool set its plugin names, which can then be changed.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Label, Select, Static, TextArea

from annotation.formats.registry import describe_formats
from annotation.tasks import create_benchmark, default_tool_set
from evaluation.tools import tool_set_names
from tui.messages import Failed, Saved
from tui.safe_text import data_text
from tui.screens.base import WorkScreen
from tui.typed_keys import after_typed_keys
from tui.widgets.data_input import DataInput
from tui.widgets.footer import KeyFooter
from tui.widgets.layered_text_area import LayeredTextArea
from tui.widgets.selection import choose, chosen, data_options

TITLE = "New benchmark · ctrl+s creates it, escape cancels"
TOOL_SET_PROMPT = "the format's own (some formats have none)"


class NewBenchmarkScreen(WorkScreen):
    """Dismissed with the new benchmark's name (home then selects it), or not at all when cancelled."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="new_benchmark.cancel"),
        Binding("ctrl+s", "create", "Create", priority=True, id="new_benchmark.create"),
    ]

    def __init__(self) -> None:
        super().__init__(classes="modal")

    def compose(self) -> ComposeResult:
        formats = describe_formats("benchmark")
        with VerticalScroll(classes="dialog", id="new-benchmark"):
            yield Label(TITLE, classes="section-title")
            with Horizontal(classes="field-row"):
                yield Label("name")
                yield DataInput(id="name", placeholder="a new benchmark's name")
            with Horizontal(classes="field-row"):
                yield Label("format")
                yield Select(
                    data_options((f"{name} · {summary}", name) for name, summary in formats),
                    allow_blank=False,
                    id="format",
                )
            with Horizontal(classes="field-row"):
                yield Label("tool set")
                yield Select([(name, name) for name in tool_set_names()], prompt=TOOL_SET_PROMPT, id="tool-set")
            with Horizontal(classes="field-row"):
                yield Label("description")
                yield DataInput(id="description", placeholder="one line about it (optional)")
            yield Label("Guidelines for its authors (Markdown, optional)", classes="hint")
            yield LayeredTextArea(id="bench-guidelines", language="markdown")
            yield Static("", id="form-error", classes="warnings")
        yield KeyFooter()

    def on_screen_resume(self) -> None:  # nothing stored to load
        pass

    def on_mount(self) -> None:
        self._pick_tool_set(chosen(self.query_one("#format", Select)))
        self.query_one("#name", Input).focus()

    @on(Select.Changed, "#format")
    def _format_changed(self, event: Select.Changed) -> None:
        self._pick_tool_set(chosen(event.select))

    def _pick_tool_set(self, source_format: Any) -> None:
        """The tool set the format's plugin names (what the CLI gives it without ``--tools``)."""
        choose(self.query_one("#tool-set", Select), default_tool_set(str(source_format)) if source_format else None)

    def typed(self) -> dict[str, str]:
        """What was typed into the form's text fields, by field."""
        return {
            "name": self.query_one("#name", Input).value,
            "description": self.query_one("#description", Input).value,
            "guidelines": self.query_one("#bench-guidelines", TextArea).text,
        }

    def unsaved_changes(self) -> list[str]:
        typed = [field for field, text in self.typed().items() if text.strip()]
        return [f"the new benchmark's {', '.join(typed)}"] if typed else []

    def action_cancel(self) -> None:
        self.confirm_discard(self.app.pop_screen)

    @after_typed_keys
    def action_create(self) -> None:
        typed = self.typed()
        source_format = chosen(self.query_one("#format", Select))
        tool_set = chosen(self.query_one("#tool-set", Select))
        self.query_one("#form-error", Static).update("")

        def create(session: Any) -> str:
            bench = create_benchmark(
                session,
                typed["name"],
                str(source_format or ""),
                tool_set=tool_set,
                description=typed["description"].strip(),
                guidelines=typed["guidelines"] if typed["guidelines"].strip() else None,
            )
            return bench.name

        self.save("create benchmark", create)

    @on(Failed)
    def _refused(self, message: Failed) -> None:
        """Why it was not created, on the form itself; the typed values stay to be corrected."""
        error = self.query_one("#form-error", Static)
        error.update(data_text(f"Not created: {message.error}"))
        error.scroll_visible()  # below the guidelines: in a short terminal the form scrolls to it

    @on(Saved)
    def _created(self, message: Saved) -> None:
        message.stop()
        self.dismiss(message.data)
