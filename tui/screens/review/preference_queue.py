"""Preference queue: two runs' answers to one task side by side (stacked when narrow), judged A / B / tie.

Blind by construction: the screen only ever receives what ``pair_view`` lets through — the task, its
images and the two answers labelled A and B in an order drawn per person and item — so no run, model
or verdict can reach the terminal. ``r`` types a reason that goes with the next judgement (or updates
the current one); judging moves on to the next item, ``u`` takes the judgement back, and ctrl+z puts
an item back as it was before the last judgement (kept across restarts like every other undo).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static
from tui.widgets.header import Header

from annotation.review.preferences import Side
from tui.messages import PreviewLoaded, Result, Saved
from tui.safe_text import data_text, visible
from tui.screens.base import WorkScreen
from tui.screens.review.prefs_data import (
    PrefItem,
    PrefQueue,
    pref_item,
    pref_queue,
    submit_preference,
    withdraw_preference,
)
from tui.widgets.footer import KeyFooter
from tui.widgets.image_pane import ImagePane
from tui.widgets.review.event_text import event_summary
from tui.widgets.review.panels import content_text

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")
LABELS = {"a": "A is better", "b": "B is better", "tie": "tie"}


def answer_text(side: Side, *, max_events: int = 80) -> Text:
    """One answer as the judge sees it: its label, final answer and a line per step."""
    out = Text()
    out.append(f"Answer {side.label}", style="bold")
    if side.status != "done":
        out.append(f"  ({visible(side.status)})", style="yellow")
    out.append("\nfinal answer: ", style="dim")
    out.append(visible(side.final_answer if side.final_answer is not None else "—", keep_newlines=True) + "\n")
    if side.events:
        out.append(f"\nSteps ({len(side.events)})\n", style="bold")
        for e in side.events[:max_events]:
            out.append(f"{e['ordinal']:>3} ", style="dim")
            out.append(
                event_summary(e["kind"], e["payload"], bool(e["failed"]), 160) + "\n",
                style="red" if e["failed"] else "",
            )
        if len(side.events) > max_events:
            out.append(f"    … {len(side.events) - max_events} more\n", style="dim")
    return out


@dataclass
class PrefQueueLoaded(Result):
    """My preference items, in order."""

    WHAT: ClassVar[str] = "queue"
    queue: PrefQueue


@dataclass
class PrefItemLoaded(Result):
    """One pair of answers to judge, blind."""

    WHAT: ClassVar[str] = "item"
    item: PrefItem


class PreferenceQueueScreen(WorkScreen):
    CSS_PATH = CSS
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # narrow: the answers are stacked
    # Short: the task and its image give up rows, so each stacked answer keeps five lines at 80x24 (it
    # had one under a 14-row task and image).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("a", "choose('a')", "A better", id="preference_queue.choose_a"),
        Binding("b", "choose('b')", "B better", id="preference_queue.choose_b"),
        Binding("t", "choose('tie')", "Tie", id="preference_queue.choose_tie"),
        Binding("r", "reason", "Reason", id="preference_queue.reason"),
        Binding("right,l", "next", "Next", key_display="→", id="preference_queue.next"),
        Binding("left,h", "prev", "Previous", key_display="←", id="preference_queue.prev"),
        Binding("u", "withdraw", "Undo judgement", id="preference_queue.withdraw"),
        Binding("i", "next_image", "Next image", id="preference_queue.next_image"),
        Binding("escape", "back", "Back", id="preference_queue.back"),
    ]

    def __init__(self, annotator: str | None = None) -> None:
        super().__init__()
        self.annotator = annotator
        self.state: PrefQueue | None = None
        self.index = -1
        self.item: PrefItem | None = None
        self.reason = ""
        self.image_index = 0
        self._advance_after_save = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="pref-status")
        with Horizontal(id="pref-top"):
            with VerticalScroll(id="pref-task-scroll", can_focus=False):
                yield Static("", id="pref-task")
            yield ImagePane("", id="pref-image")
        with Horizontal(id="pref-answers"):
            with VerticalScroll(id="pref-a", can_focus=False, classes="pref-answer"):
                yield Static("", id="pref-a-text")
            with VerticalScroll(id="pref-b", can_focus=False, classes="pref-answer"):
                yield Static("", id="pref-b-text")
        with Vertical(id="pref-bottom"):
            yield Static("", id="pref-choice")
            yield Input(placeholder="reason for the judgement (enter keeps it, escape cancels)", id="pref-reason")
        yield KeyFooter()

    def on_mount(self) -> None:
        box = self.query_one("#pref-reason", Input)
        box.display, box.disabled = False, True  # hidden and unfocusable: it must not take the judging keys
        self.query_one("#pref-image", ImagePane).display = False

    # ------------------------------------------------------------------ data

    @property
    def who(self) -> str:
        return self.annotator or self.cm.actor or ""

    def refresh_data(self) -> None:
        who = self.who
        if not who:
            self.query_one("#pref-status", Static).update("start chainmark with --as NAME to judge")
            return
        self.fetch(PrefQueueLoaded, lambda s: PrefQueueLoaded(pref_queue(s, who)))

    def _load_item(self) -> None:
        if self.state is None or not (0 <= self.index < len(self.state.items)):
            return
        item_id, who = self.state.items[self.index].assignment_id, self.who
        self.fetch(PrefItemLoaded, lambda s: PrefItemLoaded(pref_item(s, who, item_id)))

    @on(PrefQueueLoaded)
    def _queue_loaded(self, message: PrefQueueLoaded) -> None:
        self._show_queue(message.queue)

    @on(PrefItemLoaded)
    def _item_loaded(self, message: PrefItemLoaded) -> None:
        self._show_item(message.item)

    @on(PreviewLoaded)
    def _preview_loaded(self, message: PreviewLoaded) -> None:
        self.query_one("#pref-image", ImagePane).show(message.image, message.caption, source=message.sha256)

    def _current_id(self) -> int | None:
        if self.state is None or not (0 <= self.index < len(self.state.items)):
            return None
        return self.state.items[self.index].assignment_id

    def _show_queue(self, state: PrefQueue) -> None:
        previous = self._current_id()
        self.state = state
        ids = [i.assignment_id for i in state.items]
        if previous in ids:
            self.index = ids.index(previous)
            if self._advance_after_save and self.index + 1 < len(ids):
                self.index += 1
        else:
            self.index = state.first_open()
        self._advance_after_save = False
        if not state.items:
            self.item = None
            self.query_one("#pref-status", Static).update(data_text(f"{state.annotator}: no pairs to judge"))
            for wid in ("#pref-task", "#pref-a-text", "#pref-b-text", "#pref-choice"):
                self.query_one(wid, Static).update("")
            return
        self._load_item()

    def _show_item(self, item: PrefItem) -> None:
        if item.view.item.assignment_id != self._current_id():
            return
        changed = self.item is None or self.item.view.item.assignment_id != item.view.item.assignment_id
        self.item = item
        view = item.view
        self.query_one("#pref-task", Static).update(content_text({"task": view.task}))
        self.query_one("#pref-a-text", Static).update(answer_text(view.sides[0]))
        self.query_one("#pref-b-text", Static).update(answer_text(view.sides[1]))
        if changed:
            self.image_index = 0
            for wid in ("#pref-a", "#pref-b", "#pref-task-scroll"):
                self.query_one(wid, VerticalScroll).scroll_home(animate=False)
            self._load_image()
        self._show_status()

    def _load_image(self) -> None:
        images = self.item.images if self.item else []
        self.fetch_preview(self.query_one("#pref-image", ImagePane), images, self.image_index)

    def _show_status(self) -> None:
        state, item = self.state, self.item
        if state is None or item is None:
            return
        text = Text()
        text.append(state.annotator, style="bold")
        text.append(
            f"  {state.done}/{len(state.items)} judged  ·  item {self.index + 1} of {len(state.items)}"
            f"  ·  task {item.view.task.get('id')}  ·  blind",
            style="",
        )
        others = [f"{name} {done}/{n}" for name, done, n in state.progress if name != state.annotator]
        if others:
            text.append("  ·  " + ", ".join(visible(o) for o in others), style="dim")
        self.query_one("#pref-status", Static).update(text)
        choice = Text()
        choice.append("a", style="bold cyan")
        choice.append(" A better   ")
        choice.append("b", style="bold cyan")
        choice.append(" B better   ")
        choice.append("t", style="bold cyan")
        choice.append(" tie   ")
        choice.append("r", style="bold cyan")
        choice.append(" reason     ")
        own = item.view.own_choice
        if own:
            choice.append(f"judged: {LABELS[own]}", style="green")
            if item.view.own_reason:
                choice.append(" — " + visible(item.view.own_reason), style="italic")
        else:
            choice.append("not judged yet", style="dim")
        if self.reason:
            choice.append("   reason for the next judgement: " + visible(self.reason), style="italic")
        self.query_one("#pref-choice", Static).update(choice)

    # ------------------------------------------------------------------ judging

    def action_choose(self, choice: str) -> None:
        if self.item is None or isinstance(self.focused, Input):
            return
        item_id, who = self.item.view.item.assignment_id, self.who
        reason = self.reason or self.item.view.own_reason
        self.reason = ""
        self._advance_after_save = True
        self.save("preference", lambda s: submit_preference(s, who, item_id, choice, reason))

    @on(Saved)
    def saved(self, message: Saved) -> None:
        if message.what == "preference":
            self.notify("judged", timeout=2)
        elif message.what == "withdraw-preference":
            self.notify("judgement taken back", timeout=2)

    def action_withdraw(self) -> None:
        if self.item is None or self.item.view.own_choice is None:
            self.notify("nothing judged here to take back", severity="warning")
            return
        item_id, who = self.item.view.item.assignment_id, self.who
        self.save("withdraw-preference", lambda s: withdraw_preference(s, who, item_id))

    def action_reason(self) -> None:
        if self.item is None:
            return
        box = self.query_one("#pref-reason", Input)
        box.value = self.reason or (self.item.view.own_reason or "")
        box.display, box.disabled = True, False
        box.focus()

    def _close_reason(self) -> None:
        box = self.query_one("#pref-reason", Input)
        box.display, box.disabled = False, True
        self.set_focus(None)

    @on(Input.Submitted, "#pref-reason")
    def _reason_done(self, event: Input.Submitted) -> None:
        self._close_reason()
        text = event.value.strip()
        item = self.item
        if item is not None and item.view.own_choice is not None:  # judged already: keep the choice, new reason
            item_id, who, choice = item.view.item.assignment_id, self.who, item.view.own_choice
            self.save("preference", lambda s: submit_preference(s, who, item_id, choice, text or None))
            return
        self.reason = text
        self._show_status()

    # ------------------------------------------------------------------ navigation

    def _move(self, delta: int) -> None:
        if self.state is None or not self.state.items:
            return
        self.index = max(0, min(len(self.state.items) - 1, self.index + delta))
        self._load_item()

    def action_next(self) -> None:
        self._move(1)

    def action_prev(self) -> None:
        self._move(-1)

    def action_next_image(self) -> None:
        if self.item is not None and self.item.images:
            self.image_index += 1
            self._load_image()

    def action_back(self) -> None:
        if self.query_one("#pref-reason", Input).display:
            self._close_reason()
        else:
            self.app.pop_screen()
