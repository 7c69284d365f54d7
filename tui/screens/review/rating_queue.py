"""Rating queue: the annotator's assigned targets one at a time, rated with single keys.

Keys come from the scale (``y``/``n``, ``0``–``2``, ``1``–``9`` and ``0`` for 10 on each dimension
of a 1–10 scale). In blind mode the verdicts and other ratings stay hidden until the rating is in;
then the screen shows them and waits for → so the rater can compare before moving on. The gold
answer is shown after the target; the run's own per-item score only once the blind rating is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static
from tui.widgets.header import Header

from tui.undo import Edit, made_row
from tui.messages import PreviewLoaded, Result, Saved
from tui.safe_text import data_cells, data_text
from tui.screens.review.open_trajectory import TrajectoryOfTarget, open_trajectory_of
from tui.screens.base import WorkScreen
from tui.screens.review.data import (
    QueueState,
    RatingItem,
    rating_item,
    rating_queue,
    submit_rating,
    trajectory_id_of,
)
from tui.widgets.footer import KeyFooter
from tui.widgets.image_pane import ImagePane
from tui.widgets.review.event_text import value_text
from tui.screens.review.evidence import with_evidence
from tui.widgets.review.panels import JudgementsPanel, content_text
from tui.widgets.review.scale_keys import legend, scale_keys

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")


@dataclass
class RatingQueueLoaded(Result):
    """My assignments, in order, with progress per rater."""

    WHAT: ClassVar[str] = "queue"
    state: QueueState


@dataclass
class RatingItemLoaded(Result):
    """One assignment with what is rated, blind as the rater must see it."""

    WHAT: ClassVar[str] = "item"
    item: RatingItem


class RatingQueueScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("right,l", "next", "Next", key_display="→", id="rating_queue.next"),
        Binding("left,h", "prev", "Previous", key_display="←", id="rating_queue.prev"),
        Binding("up", "dimension(-1)", "Dimension ↑", show=False, id="rating_queue.dimension_minus1"),
        Binding("down", "dimension(1)", "Dimension ↓", show=False, id="rating_queue.dimension_1"),
        Binding("enter", "submit", "Submit", show=False, id="rating_queue.submit"),
        Binding("c", "comment", "Comment", id="rating_queue.comment"),
        Binding("equals_sign", "type_value", "Type value", id="rating_queue.type_value"),
        Binding("u", "undo_rating", "Undo rating", id="rating_queue.undo_rating"),
        Binding("i", "next_image", "Next image", id="rating_queue.next_image"),
        Binding("t", "open_trajectory", "Trajectory", id="rating_queue.open_trajectory"),
        Binding("pagedown", "scroll(1)", "Scroll", show=False, id="rating_queue.scroll_1"),
        Binding("pageup", "scroll(-1)", "Scroll up", show=False, id="rating_queue.scroll_minus1"),
        Binding("escape", "back", "Back", id="rating_queue.back"),
    ]

    def __init__(self, annotator: str | None = None, scale: str | None = None) -> None:
        super().__init__()
        self.annotator = annotator
        self.scale_filter = scale
        self.state: QueueState | None = None
        self.index = -1
        self.item: RatingItem | None = None
        self.pending: dict[str, Any] = {}
        self.dimension = 0
        self.comment = ""
        self.image_index = 0
        self.my_edits: list[Edit] = []
        self._input_mode = ""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="queue-status")
        with Horizontal(id="rate-body"):
            with Vertical(id="rate-main"):
                with VerticalScroll(id="target-scroll", can_focus=False):
                    yield Static("", id="target-content")
                yield JudgementsPanel(id="judgements")
            with Vertical(id="rate-side"):
                with VerticalScroll(id="rubric-scroll", can_focus=False):
                    yield Static("", id="rubric")
                yield ImagePane("", id="rate-image")
                yield DataTable(id="progress", cursor_type="none")
        yield Input(placeholder="", id="rate-input")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#progress", DataTable).add_columns("annotator", "done", "assigned")
        self.query_one("#rate-input", Input).display = False

    # ------------------------------------------------------------------ data

    @property
    def who(self) -> str:
        return self.annotator or self.cm.actor or ""

    def refresh_data(self) -> None:
        who, scale = self.who, self.scale_filter
        if not who:
            self.query_one("#queue-status", Static).update("start chainmark with --as NAME to rate")
            return
        self.fetch(RatingQueueLoaded, lambda s: RatingQueueLoaded(rating_queue(s, who, scale)))

    def _load_item(self) -> None:
        if self.state is None or not (0 <= self.index < len(self.state.entries)):
            return
        entry, who = self.state.entries[self.index], self.who
        self.fetch(RatingItemLoaded, lambda s: RatingItemLoaded(rating_item(s, who, entry)))

    @on(RatingQueueLoaded)
    def _queue_loaded(self, message: RatingQueueLoaded) -> None:
        self._show_queue(message.state)

    @on(RatingItemLoaded)
    def _item_loaded(self, message: RatingItemLoaded) -> None:
        self._show_item(message.item)

    @on(PreviewLoaded)
    def _preview_loaded(self, message: PreviewLoaded) -> None:
        self.query_one("#rate-image", ImagePane).show(message.image, message.caption, source=message.sha256)

    def _show_queue(self, state: QueueState) -> None:
        previous = (
            self.state.entries[self.index].assignment_id
            if self.state and 0 <= self.index < len(self.state.entries)
            else None
        )
        self.state = state
        ids = [e.assignment_id for e in state.entries]
        self.index = ids.index(previous) if previous in ids else state.first_open()
        table = self.query_one("#progress", DataTable)
        table.clear()
        for name, done, assigned in state.progress:
            table.add_row(*data_cells(name), done, assigned, key=name)
        if not state.entries:
            self.item = None
            self.query_one("#queue-status", Static).update(data_text(f"{state.annotator}: nothing assigned"))
            self.query_one("#target-content", Static).update("")
            return
        self._load_item()

    def _show_item(self, item: RatingItem) -> None:
        if self.state is None or item.entry.assignment_id != self.state.entries[self.index].assignment_id:
            return
        changed = self.item is None or self.item.entry.assignment_id != item.entry.assignment_id
        self.item = item
        if changed:
            self.pending, self.dimension, self.comment, self.image_index = {}, 0, "", 0
            self.query_one("#target-scroll", VerticalScroll).scroll_home(animate=False)
        view = item.view
        self.query_one("#target-content", Static).update(with_evidence(content_text(view.content), item.evidence))
        self.query_one(JudgementsPanel).show(view.verdicts, view.other_ratings, view.adjudications, view.hidden)
        self._show_status()
        self._show_rubric()
        if changed:
            self._load_image()

    def _load_image(self) -> None:
        images = self.item.images if self.item else []
        self.fetch_preview(self.query_one("#rate-image", ImagePane), images, self.image_index)

    def _show_status(self) -> None:
        state, item = self.state, self.item
        if state is None or item is None:
            return
        e = item.entry
        text = Text()
        text.append(f"{state.annotator}", style="bold")
        text.append(
            f"  {state.done}/{len(state.entries)} done  ·  item {self.index + 1} of {len(state.entries)}"
            f"  ·  {e.target.label()} on {e.scale}"
        )
        if item.view.blind:
            text.append("  · blind", style="yellow")
        own = item.view.own_rating
        if own:
            text.append(f"  · rated {value_text(own['value'])}", style="green")
        else:
            text.append("  · not rated", style="dim")
        self.query_one("#queue-status", Static).update(text)

    def _show_rubric(self) -> None:
        item = self.item
        if item is None:
            return
        scale = item.scale
        text = Text()
        text.append(f"Scale {scale.name}", style="bold")
        text.append(f" ({scale.level})\n")
        text.append("keys: " + legend(scale) + "\n", style="cyan")
        if scale.dimensions:
            own = (item.view.own_rating or {}).get("value") or {}
            for i, dim in enumerate(scale.dimensions):
                value = self.pending.get(dim, own.get(dim) if isinstance(own, dict) else None)
                mark = "▶ " if i == self.dimension else "  "
                text.append(
                    f"{mark}{dim.replace('_', ' ')}: {'' if value is None else value}\n",
                    style="bold" if i == self.dimension else "",
                )
            text.append("enter submits the dimensions set so far\n", style="dim")
        if self.comment:
            text.append(f"comment: {self.comment}\n", style="italic")
        if scale.rubric:
            text.append("\n" + scale.rubric + "\n")
        if item.guidelines:
            text.append("\nGuidelines\n", style="bold")
            text.append(item.guidelines.strip() + "\n")
        self.query_one("#rubric", Static).update(text)

    # ------------------------------------------------------------------ rating

    def on_key(self, event: events.Key) -> None:
        if self.item is None or isinstance(self.focused, Input):
            return
        keys = scale_keys(self.item.scale)
        if event.key in keys:
            event.stop()
            event.prevent_default()
            self._choose(keys[event.key])

    def _choose(self, value: Any) -> None:
        assert self.item is not None
        dims = self.item.scale.dimensions
        if not dims:
            self._submit(value)
            return
        self.pending[dims[self.dimension]] = value
        if len(self.pending) == len(dims):
            self._submit(dict(self.pending))
        else:
            self.dimension = next((i for i, d in enumerate(dims) if d not in self.pending), self.dimension)
            self._show_rubric()

    def action_submit(self) -> None:
        if self.item is not None and self.item.scale.dimensions and self.pending:
            self._submit(dict(self.pending))

    def _submit(self, value: Any) -> None:
        assert self.item is not None
        entry, who, comment = self.item.entry, self.who, self.comment or None

        def write(session):  # type: ignore[no-untyped-def]
            rid = submit_rating(session, who, entry, value, comment)
            from store.models import HumanRating

            made = made_row(session, HumanRating, rid)
            return rid, Edit(f"rating #{rid} of {entry.target.label()}", "undo_rating", {"rating_id": rid}, made=made)

        self.pending, self.comment = {}, ""
        self.save("rating", write)

    @on(Saved)
    def saved(self, message: Saved) -> None:
        if message.what == "rating" and message.data:
            label = f"rating #{message.data} "
            edit = next(
                (e for e in reversed(self.cm.undo_stack_for(self.undo_scope)) if e.label.startswith(label)), None
            )
            if edit is not None:
                self.my_edits.append(edit)
            self.notify(f"rated {self.item.entry.target.label() if self.item else ''}", timeout=2)

    def action_undo_rating(self) -> None:
        if not self.my_edits:
            self.notify("no rating of yours to undo here", severity="warning")
            return
        edit = self.my_edits.pop()
        stack = self.cm.undo_stack_for(self.undo_scope)
        if edit in stack:
            stack.remove(edit)
        self.save(f"undid {edit.label}", edit.undo)

    # ------------------------------------------------------------------ navigation and input

    def _move(self, delta: int) -> None:
        if self.state is None or not self.state.entries:
            return
        self.index = max(0, min(len(self.state.entries) - 1, self.index + delta))
        self._load_item()

    def action_next(self) -> None:
        self._move(1)

    def action_prev(self) -> None:
        self._move(-1)

    def action_dimension(self, delta: int) -> None:
        if self.item is not None and self.item.scale.dimensions:
            self.dimension = (self.dimension + delta) % len(self.item.scale.dimensions)
            self._show_rubric()

    def action_scroll(self, pages: int) -> None:
        scroll = self.query_one("#target-scroll", VerticalScroll)
        if pages > 0:
            scroll.scroll_page_down(animate=False)
        else:
            scroll.scroll_page_up(animate=False)

    def action_next_image(self) -> None:
        if self.item is not None and self.item.images:
            self.image_index += 1
            self._load_image()

    def _open_input(self, mode: str, placeholder: str, value: str = "") -> None:
        box = self.query_one("#rate-input", Input)
        self._input_mode = mode
        box.placeholder = placeholder
        box.value = value
        box.display = True
        box.focus()

    def action_comment(self) -> None:
        if self.item is not None:
            self._open_input("comment", "comment for the next rating (enter keeps it, escape cancels)", self.comment)

    def action_type_value(self) -> None:
        if self.item is not None:
            hint = "dimension=value,… or a JSON object" if self.item.scale.dimensions else "a value on the scale"
            self._open_input("value", f"type {hint}, enter rates")

    def _close_input(self) -> None:
        box = self.query_one("#rate-input", Input)
        box.display = False
        self._input_mode = ""
        self.set_focus(None)

    @on(Input.Submitted, "#rate-input")
    def _input_done(self, event: Input.Submitted) -> None:
        mode, text = self._input_mode, event.value.strip()
        self._close_input()
        if mode == "comment":
            self.comment = text
            self._show_rubric()
        elif mode == "value" and text:
            self._submit(text)

    def action_open_trajectory(self) -> None:
        """The full trajectory shows verdicts, so a blind rater gets it only after rating."""
        if self.item is None:
            return
        if self.item.view.hidden:
            self.notify("blind: rate first, then the trajectory (with its verdicts) opens", severity="warning")
            return
        target = self.item.entry.target
        self.fetch(TrajectoryOfTarget, lambda s: TrajectoryOfTarget(trajectory_id_of(s, target)))

    @on(TrajectoryOfTarget)
    def _open_trajectory(self, message: TrajectoryOfTarget) -> None:
        open_trajectory_of(self, message)

    def action_back(self) -> None:
        if self._input_mode:
            self._close_input()
        else:
            self.app.pop_screen()
