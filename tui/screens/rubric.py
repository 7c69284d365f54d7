"""A benchmark's judge rubric: the current version's text to edit, ctrl+s saving it as a new version,
and the older versions to look at (versions are never edited; ``chainmark rubrics`` is the same)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Static, TextArea
from tui.widgets.header import Header
from textual.widgets.option_list import Option

from evaluation.judges.rubrics import RUBRIC_JUDGE, add_rubric, rubric_text, rubric_versions
from evaluation.judges.templates import Template, load_template
from tui.safe_text import visible
from tui.screens.base import WorkScreen
from tui.typed_keys import after_typed_keys
from tui.widgets.footer import KeyFooter
from tui.widgets.layered_text_area import LayeredTextArea


class RubricScreen(WorkScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="rubric.back"),
        Binding("ctrl+s", "save_rubric", "Save version", priority=True, id="rubric.save_rubric"),
    ]

    def __init__(self, benchmark: str) -> None:
        super().__init__()
        self.benchmark = benchmark
        self.versions: list[Template] = []
        self._newest_seen: str | None = None
        self._shown_text = ""  # the text last put in the editor (a stored version, or the built-in)
        self._saved_text: str | None = None  # the text of the last save that was stored

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="builder-body"):
            yield LayeredTextArea("", language="markdown", id="rubric-source")
            with Vertical(id="rubric-side"):
                yield Static("", id="rubric-status")
                yield OptionList(id="rubric-versions")
        yield KeyFooter()

    def on_mount(self) -> None:
        super().on_mount()
        self.sub_title = f"rubric of {self.benchmark}"
        self.refresh_data()

    def refresh_data(self) -> None:
        """Read the benchmark's rubric versions on a worker thread, then show the newest."""
        name = self.benchmark

        def read() -> None:
            try:
                versions = self.cm.read(lambda s: rubric_versions(s, name))
            except Exception as exc:  # noqa: BLE001 - a missing benchmark is said on screen
                self.cm.call_from_thread(self.notify, str(exc), title="rubric", severity="error")
                return
            self.cm.call_from_thread(self._show_versions, versions)

        self.run_worker(read, thread=True, exclusive=True, group="load:rubric", exit_on_error=False)

    def _show_versions(self, versions: list[Template]) -> None:
        self.versions = versions
        newest = versions[-1] if versions else None
        if newest is not None and self._newest_seen is not None and newest.version != self._newest_seen:
            self.notify(f"rubric v{newest.version} saved", timeout=3)
        self._newest_seen = newest.version if newest else ""
        options = self.query_one("#rubric-versions", OptionList)
        options.clear_options()
        options.add_options([Option(visible(self._label(t, t is newest)), id=t.version) for t in reversed(versions)])
        if not self.unsaved_changes():  # a reload (coming back to the screen) never replaces the author's edit
            self._show(newest)

    def _label(self, tpl: Template, newest: bool) -> str:
        first = tpl.user.strip().split("\n")[0][:40]
        return f"v{tpl.version}{' (current)' if newest else ''}  {first}"

    def _show(self, tpl: Template | None) -> None:
        """Put ``tpl``'s text in the editor (the built-in rubric's when None) and say which it is."""
        if tpl is None:
            builtin = load_template(RUBRIC_JUDGE)
            status = f"No authored rubric: `judge` uses the built-in {builtin.ref}. ctrl+s saves this text as v1."
            text = rubric_text(builtin)
        else:
            newest = self.versions[-1].version if self.versions else ""
            state = "current" if tpl.version == newest else f"older; v{newest} is current"
            status = f"Rubric v{tpl.version} ({state}). ctrl+s saves the text as a new version."
            text = rubric_text(tpl)
        self.query_one("#rubric-status", Static).update(visible(status))
        self.query_one("#rubric-source", TextArea).load_text(text)
        self._shown_text = text

    def unsaved_changes(self) -> list[str]:
        """Edited rubric text not saved as a version: a version is a deliberate ctrl+s, so leaving asks."""
        text = self.query_one("#rubric-source", TextArea).text
        if text in (self._shown_text, self._saved_text):
            return []
        return [f"the edited rubric of {self.benchmark} (ctrl+s saves it as a new version)"]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chosen = next((t for t in self.versions if t.version == event.option.id), None)
        if chosen is not None:
            self._show(chosen)

    @after_typed_keys
    def action_save_rubric(self) -> None:
        name, text, actor = self.benchmark, self.query_one("#rubric-source", TextArea).text, self.cm.actor

        def apply(session: Any) -> Any:
            version = add_rubric(session, name, text, actor)[0].version
            self._saved_text = text  # stored (on the worker): quitting right after need not ask
            return version

        self.save(f"rubric of {name}", apply)

    def action_back(self) -> None:
        self.leave()
