"""The stored events behind one trajectory step, as pretty JSON: what was sent, what came back, what ran.

For when the readable transcript is not enough (a malformed tool call, an odd usage count). The JSON
is the payload as stored (secrets are never stored); characters a terminal would act on are written
as escapes and it is shown as text, never as Rich markup.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import get_current_worker

from tui.safe_text import json_safe, visible
from tui.screens.runs.step_details import RawEvent, pretty_json
from tui.widgets.footer import KeyFooter
from tui.widgets.review.step_view import highlight


def raw_json(events: tuple[RawEvent, ...]) -> str:
    """The events as one indented JSON list, safe to put on a terminal."""
    return visible(json_safe(pretty_json([e.as_dict() for e in events])), keep_newlines=True)


class RawEventsScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,R", "close", "Back", id="raw_events.close"),
    ]
    DEFAULT_CSS = """
    RawEventsScreen { background: $background 60%; }
    RawEventsScreen > #raw-title { height: 1; padding: 0 1; background: $panel; }
    RawEventsScreen > #raw-body { height: 1fr; background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, events: tuple[RawEvent, ...]) -> None:
        super().__init__()
        self.raw_title = title
        self.events = events
        self.text = raw_json(events)

    def compose(self) -> ComposeResult:
        title = Text(visible(self.raw_title), style="bold")
        title.append(f"  {len(self.events)} stored event{'s' if len(self.events) != 1 else ''}", style="dim")
        yield Static(title, id="raw-title")
        with VerticalScroll(id="raw-body"):
            yield Static(Text(self.text), id="raw-json")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#raw-body", VerticalScroll).focus()
        self.run_worker(
            self._colour,
            thread=True,
            exclusive=True,
            group="raw-json",
            exit_on_error=False,
            description="highlighting the raw events",
        )

    def _colour(self) -> None:
        """Plain text first, colours when a worker has them (a long payload takes pygments a while)."""
        coloured = highlight(self.text, "json")
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_coloured, coloured)

    def _show_coloured(self, coloured: Text) -> None:
        if self.is_attached:
            self.query_one("#raw-json", Static).update(coloured)

    def action_close(self) -> None:
        self.dismiss(None)
