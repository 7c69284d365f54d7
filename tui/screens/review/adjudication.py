"""Adjudication queue: targets where raters split beyond a threshold, everything side by side.

The reviewer sees the target, every judge's verdict with its rationale, every human rating with its
comment and any earlier adjudication, then records a final value and a rationale. The originals stay;
the stored adjudication lists which verdicts and ratings it overrode. Items where a rater's clear
yes/no contradicts the run's own score of the answer are marked ⚠ with how many raters do, and the
most contradicted can be taken first (``c``).
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
from textual.widgets import DataTable, Input, Static
from tui.widgets.header import Header

from evaluation.agreement.contradicted import Flag, FlagKey, flag_key
from evaluation.agreement.disagreements import Disagreement
from tui.typed_keys import after_typed_keys
from tui.messages import Result, Saved
from tui.safe_text import data_cells, visible
from tui.screens.review.open_trajectory import TrajectoryOfTarget, open_trajectory_of
from tui.screens.base import WorkScreen
from tui.screens.review.adjudication_data import (
    AdjudicationItem,
    FlaggedQueue,
    QueueFilter,
    adjudication_item,
    flagged_queue,
    record_adjudication,
)
from tui.screens.review.data import trajectory_id_of
from tui.widgets.footer import KeyFooter
from tui.widgets.review.event_text import value_text
from tui.screens.review.evidence import evidence_line
from tui.widgets.review.panels import JudgementsPanel, content_text
from tui.widgets.review.scale_keys import legend
from tui.widgets.review.trajectory_row import CONTRADICTION

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")
NARROW = 120  # columns below which the queue table gives the target most of the width
ITEM_ACTIONS = frozenset({"focus_value", "open_trajectory", "record"})  # need an item on screen


def _row_key(d: Disagreement) -> str:
    return f"{d.unit.label()}|{d.scale}|{d.dimension}"


@dataclass
class DisagreementsLoaded(Result):
    """The disagreement queue for a filter."""

    WHAT: ClassVar[str] = "disagreements"
    filter: QueueFilter
    queue: FlaggedQueue


@dataclass
class AdjudicationItemLoaded(Result):
    """One disagreement with everything a reviewer needs to decide it."""

    WHAT: ClassVar[str] = "item"
    item: AdjudicationItem


class AdjudicationScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding(
            "plus,equals_sign",
            "threshold(0.1)",
            "Split",
            key_display="+/-",
            tooltip="Threshold +",
            id="adjudication.threshold_0_1",
        ),
        Binding(
            "minus", "threshold(-0.1)", "Threshold −", key_display="-", show=False, id="adjudication.threshold_minus0_1"
        ),
        Binding("a", "toggle_adjudicated", "All", tooltip="Show adjudicated", id="adjudication.toggle_adjudicated"),
        Binding(
            "c", "toggle_contradicted", "⚠ first", tooltip="Contradicted first", id="adjudication.contradicted_first"
        ),
        Binding("v", "focus_value", "Value", tooltip="Final value", id="adjudication.focus_value"),
        Binding("t", "open_trajectory", "Trajectory", id="adjudication.open_trajectory"),
        Binding("ctrl+s", "record", "Record", priority=True, id="adjudication.record"),
        Binding("escape", "back", "Back", id="adjudication.back"),
    ]

    def __init__(self, reviewer: str | None = None, scale: str = "", threshold: float = 0.0) -> None:
        super().__init__()
        self.reviewer = reviewer
        self.filter = QueueFilter(threshold=threshold, scale=scale)
        self.items: list[Disagreement] = []
        self.flags: dict[FlagKey, Flag] = {}  # for the items about a final answer
        self.item: AdjudicationItem | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="adj-status")
        with Horizontal(id="adj-body"):
            yield DataTable(id="adj-queue", cursor_type="row", zebra_stripes=True)
            with Vertical(id="adj-main"):
                with VerticalScroll(id="adj-scroll", can_focus=False):
                    yield Static("", id="adj-content")
                yield Static("", id="adj-values")
                yield JudgementsPanel(id="adj-judgements")
                with Horizontal(id="adj-form"):
                    yield Input(placeholder="final value", id="final-value")
                    yield Input(placeholder="rationale (enter records)", id="rationale")
        yield KeyFooter()

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "-narrow")

    def on_mount(self) -> None:
        table = self.query_one("#adj-queue", DataTable)
        for label, width in (("target", 18), (CONTRADICTION, 2), ("scale", 14), ("split", 5), ("between", 24)):
            table.add_column(label, width=width)
        table.focus()

    @property
    def who(self) -> str:
        return self.reviewer or self.cm.actor or ""

    def refresh_data(self) -> None:
        flt = self.filter
        viewer = self.who
        self.fetch(DisagreementsLoaded, lambda s: DisagreementsLoaded(flt, flagged_queue(s, flt, viewer)))

    @on(DisagreementsLoaded)
    def _queue_loaded(self, message: DisagreementsLoaded) -> None:
        if message.filter == self.filter:
            self.flags = message.queue.flags
            self._show_queue(message.queue.items)

    @on(AdjudicationItemLoaded)
    def _item_loaded(self, message: AdjudicationItemLoaded) -> None:
        self._show_item(message.item)

    def _show_status(self) -> None:
        f = self.filter
        text = Text()
        text.append(f"reviewer {self.who}", style="bold")
        text.append(
            f"  ·  {len(self.items)} disagreement(s)  ·  split > {f.threshold:.1f}"
            f"  ·  {f.scale or 'all scales'}" + ("  ·  incl. adjudicated" if f.include_adjudicated else "")
        )
        n = sum(1 for d in self.items if self._contradicted(d))
        if n:
            text.append(f"  ·  {CONTRADICTION} {n} contradict the run's score", style="bold magenta")
            text.append(" (first)" if f.contradicted_first else " (c: first)", style="magenta")
        self.query_one("#adj-status", Static).update(text)

    def _show_queue(self, items: list[Disagreement]) -> None:
        table = self.query_one("#adj-queue", DataTable)
        keep = _row_key(self.item.disagreement) if self.item else None
        self.items = items
        with self.prevent(DataTable.RowHighlighted):  # refilling moves the cursor; not the reviewer's move
            table.clear()
            for d in items:
                table.add_row(
                    *data_cells(d.unit.label()),
                    self._marker(d),
                    *data_cells(
                        d.scale + (f".{d.dimension}" if d.dimension else ""),
                        f"{d.split:.2f}",
                        ", ".join(d.pair_kinds),
                    ),
                    key=_row_key(d),
                )
        self._show_status()
        if not items:
            self.item = None
            self.query_one("#adj-content", Static).update("no disagreements beyond the threshold")
            self.query_one("#adj-values", Static).update("")
            self.query_one(JudgementsPanel).show([], [], [], [])
            self._close_form()
            return
        keys = [_row_key(d) for d in items]
        with self.prevent(DataTable.RowHighlighted):
            table.move_cursor(row=keys.index(keep) if keep in keys else 0)
        self._load_item(table.cursor_row)

    def _flag(self, d: Disagreement) -> Flag | None:
        return self.flags.get(flag_key(d))

    def _marker(self, d: Disagreement) -> Text:
        """``⚠2``: two raters contradict the run's score of this answer; blank when none does."""
        flag = self._flag(d)
        n = len(flag.contradictions) if flag is not None else 0
        return Text(f"{CONTRADICTION}{n}" if n else "", style="bold magenta")

    def _contradicted(self, d: Disagreement) -> bool:
        flag = self._flag(d)
        return flag is not None and flag.contradicted

    @on(DataTable.RowHighlighted, "#adj-queue")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._load_item(event.cursor_row)

    def _load_item(self, row: int) -> None:
        if not 0 <= row < len(self.items):
            return
        d, who = self.items[row], self.who
        flag = self._flag(d)
        self.fetch(AdjudicationItemLoaded, lambda s: AdjudicationItemLoaded(adjudication_item(s, who, d, flag)))

    def _close_form(self) -> None:
        """Nothing left to decide: the form is emptied and disabled (it kept the last item's value and
        scale hint, and v, t and ctrl+s stayed offered for an item that was gone)."""
        if isinstance(self.focused, Input):
            self.query_one("#adj-queue", DataTable).focus()
        for box in self.query("#adj-form Input").results(Input):
            box.value = ""
            box.disabled = True
        self.query_one("#final-value", Input).placeholder = "nothing to adjudicate"
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys that act on the shown item are offered only while there is one."""
        if action in ITEM_ACTIONS:
            return self.item is not None
        return True

    def _show_item(self, item: AdjudicationItem) -> None:
        changed = self.item is None or _row_key(self.item.disagreement) != _row_key(item.disagreement)
        self.item = item
        for box in self.query("#adj-form Input").results(Input):
            box.disabled = False
        self.refresh_bindings()
        d, view = item.disagreement, item.view
        self.query_one("#adj-content", Static).update(content_text(view.content))
        values = Text()
        values.append(f"{d.unit.label()} on {d.scale}" + (f".{d.dimension}" if d.dimension else ""), style="bold")
        values.append(f"  split {d.split:.2f} ({', '.join(d.pair_kinds)})\n")
        if not item.evidence.empty:  # gold and the run's score stay in sight while the target scrolls
            values.append_text(evidence_line(item.evidence))
            values.append("\n")
        against = {c.who for c in item.flag.contradictions} if item.flag else set()  # the score is on the line above
        for rater, value in d.values.items():
            src = d.sources.get(rater) or ["", ""]
            values.append(
                f"  {visible(rater)} = {visible(value_text(value))}", style="green" if rater.startswith("human") else ""
            )
            values.append(f"  ({visible(src[0])} {visible(src[1])})", style="dim")
            if rater in against:
                values.append(f"  {CONTRADICTION} contradicts score", style="bold magenta")
            values.append("\n")
        self.query_one("#adj-values", Static).update(values)
        ratings = ([view.own_rating] if view.own_rating else []) + list(view.other_ratings)
        self.query_one(JudgementsPanel).show(view.verdicts, ratings, view.adjudications, [])
        if changed:
            hint = legend(item.scale).replace(" · ", ", ")
            field = f"{d.dimension} " if d.dimension else ""
            box = self.query_one("#final-value", Input)
            box.placeholder = f"final {field}value ({hint})"
            box.value = value_text(d.adjudicated) if d.adjudicated is not None else ""
            self.query_one("#rationale", Input).value = ""

    # ------------------------------------------------------------------ actions

    def action_threshold(self, delta: float) -> None:
        t = round(min(0.9, max(0.0, self.filter.threshold + delta)), 1)
        f = self.filter
        self.filter = QueueFilter(t, f.scale, f.include_adjudicated, f.contradicted_first)
        self.refresh_data()

    def action_toggle_adjudicated(self) -> None:
        f = self.filter
        self.filter = QueueFilter(f.threshold, f.scale, not f.include_adjudicated, f.contradicted_first)
        self.refresh_data()

    def action_toggle_contradicted(self) -> None:
        """Items whose raters contradict the run's score first (each group keeps largest split first)."""
        f = self.filter
        self.filter = QueueFilter(f.threshold, f.scale, f.include_adjudicated, not f.contradicted_first)
        self.refresh_data()

    def action_focus_value(self) -> None:
        self.query_one("#final-value", Input).focus()

    @on(Input.Submitted, "#final-value")
    def _value_entered(self) -> None:
        self.query_one("#rationale", Input).focus()

    @on(Input.Submitted, "#rationale")
    def _rationale_entered(self) -> None:
        self.action_record()

    @after_typed_keys
    def action_record(self) -> None:
        if self.item is None:
            return
        value = self.query_one("#final-value", Input).value.strip()
        rationale = self.query_one("#rationale", Input).value.strip()
        if not value:
            self.notify("type the final value first", severity="warning")
            self.query_one("#final-value", Input).focus()
            return
        if not rationale:
            self.notify("an adjudication needs a rationale", severity="warning")
            self.query_one("#rationale", Input).focus()
            return
        item, who = self.item, self.who

        def write(session):  # type: ignore[no-untyped-def]
            from store.models import Adjudication
            from tui.undo import Edit, made_row

            adj_id = record_adjudication(session, who, item, value, rationale)
            return adj_id, Edit(
                f"adjudication #{adj_id} of {item.target.label()}",
                "withdraw_adjudication",
                {"reviewer": who, "adjudication_id": adj_id},
                made=made_row(session, Adjudication, adj_id),
            )

        self.save("adjudication", write)

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        if message.what == "adjudication":
            self.notify(f"adjudication {message.data} recorded", timeout=3)
            self.query_one("#adj-queue", DataTable).focus()

    def action_open_trajectory(self) -> None:
        if self.item is not None:
            target = self.item.target
            self.fetch(TrajectoryOfTarget, lambda s: TrajectoryOfTarget(trajectory_id_of(s, target)))

    @on(TrajectoryOfTarget)
    def _open_trajectory(self, message: TrajectoryOfTarget) -> None:
        open_trajectory_of(self, message)

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#adj-queue", DataTable).focus()
        else:
            self.app.pop_screen()
