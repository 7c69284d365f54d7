"""Trajectory viewer: the reference chain and the model's trajectory side by side, aligned.

Checkpoint pass/fail marks sit between the two columns on the row of the event they matched; judge
verdicts and human ratings sit beside what they rate (the whole trajectory at the top, events and
checkpoint results on their rows). ``[``/``]`` walk through the other trajectories of the run.

Steps read as a transcript: code with its newlines and highlighting, timing and model usage, long
parts collapsed until ``enter``/``space`` expands the row under the cursor; ``R`` shows the stored
events behind a step as JSON; ``/`` searches the trajectory (``n``/``N`` walk the matching rows).

Under the query: answer, gold answer and the run's own score of the item; judgements contradicting
that score (or their step's failed tool call) are flagged ``⚠`` on their rows, counted in the header
and walked with ``x``/``X``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Static
from tui.widgets.header import Header

from tui.images import preview
from tui.messages import Result
from tui.safe_text import visible
from tui.screens.base import WorkScreen
from tui.screens.runs.raw_events import RawEventsScreen
from tui.screens.runs.trajectory_data import TrajectoryView, token_total, trajectory_view
from tui.widgets.footer import KeyFooter
from tui.widgets.review.event_text import clip
from tui.widgets.review.panels import JudgementsPanel
from tui.widgets.review.step_view import prepare
from tui.widgets.review.trajectory_row import CONTRADICTION, TrajectoryRow, row_matches
from tui.widgets.search_input import SearchInput

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")
THUMB = (192, 128)
NARROW = 110  # columns below which the checkpoint marks column narrows
SHOWN_CONTRADICTIONS = 3  # listed under the task; the rest are counted (every one is on its row)


def _prepared(view: TrajectoryView) -> TrajectoryView:
    """The view with its code highlighted (slow, so in the loading worker, not when the rows mount)."""
    prepare([step for row in view.rows for step in (row.ref, row.model)])
    return view


@dataclass
class TrajectoryLoaded(Result):
    """A trajectory beside its reference chain, prepared for drawing (highlighting done off the UI thread)."""

    WHAT: ClassVar[str] = "trajectory"
    view: TrajectoryView


@dataclass
class ThumbnailsLoaded(Result):
    """Shrunk images of a trajectory's steps, by asset id."""

    WHAT: ClassVar[str] = "images"
    trajectory_id: int
    thumbs: dict[int, Any]


class TrajectoryScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("down,j", "move(1)", "Next row", key_display="↓", id="trajectory.move_1"),
        Binding("up,k", "move(-1)", "Previous row", key_display="↑", id="trajectory.move_minus1"),
        Binding("right_square_bracket", "sibling(1)", "Next trajectory", key_display="]", id="trajectory.sibling_1"),
        Binding(
            "left_square_bracket", "sibling(-1)", "Previous trajectory", key_display="[", id="trajectory.sibling_minus1"
        ),
        Binding("enter,space", "expand", "Expand/collapse", key_display="⏎", id="trajectory.expand"),
        Binding("R", "raw", "Raw events", id="trajectory.raw"),
        Binding("z", "zoom", "Zoom", id="trajectory.zoom"),
        Binding("i", "input_image", "Task image", show=False, id="trajectory.input_image"),
        Binding("slash", "search", "Search", key_display="/", id="trajectory.search"),
        Binding("n", "next_match(1)", "Next match", show=False, id="trajectory.next_match"),
        Binding("N", "next_match(-1)", "Previous match", show=False, id="trajectory.previous_match"),
        Binding("x", "next_contradiction(1)", "Next contradiction", id="trajectory.next_contradiction"),
        Binding(
            "X", "next_contradiction(-1)", "Previous contradiction", show=False, id="trajectory.previous_contradiction"
        ),
        Binding("escape", "back", "Back", id="trajectory.back"),
    ]

    def __init__(self, trajectory_id: int) -> None:
        super().__init__()
        self.trajectory_id = trajectory_id
        self.view: TrajectoryView | None = None
        self.cursor = 0
        self._zoomed: tuple[object, int] | None = None  # what ``z``/``i`` showed last, to show the next one
        self.expanded: set[int] = set()  # rows shown in full (kept while the same trajectory reloads)
        self.search = ""  # the submitted search ("" for none)
        self.matches: list[int] = []  # rows matching it

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="traj-head")
        yield Static("", id="traj-task")
        yield JudgementsPanel(id="traj-judgements")
        with Horizontal(id="traj-columns"):
            yield Static("Reference chain", classes="column-title")
            yield Static("Checkpoints", classes="column-title marks-title")
            yield Static("Model trajectory", classes="column-title")
        yield VerticalScroll(id="traj-rows")
        yield Static("", id="traj-search-status")
        yield SearchInput(placeholder="search this trajectory (enter: go, escape: close)", id="traj-search")
        yield KeyFooter()

    def on_resize(self) -> None:
        self.set_class(self.size.width < NARROW, "-narrow")

    def refresh_data(self) -> None:
        tid, viewer = self.trajectory_id, self.cm.actor
        self.fetch(TrajectoryLoaded, lambda s: TrajectoryLoaded(_prepared(trajectory_view(s, tid, viewer))))

    @on(TrajectoryLoaded)
    def _trajectory_loaded(self, message: TrajectoryLoaded) -> None:
        if message.view.id == self.trajectory_id:
            self.show(message.view)

    @on(ThumbnailsLoaded)
    def _thumbnails_loaded(self, message: ThumbnailsLoaded) -> None:
        if message.trajectory_id == self.trajectory_id:
            widget_class: Any = self.cm.image_widget
            for row in self.query(TrajectoryRow):
                row.add_images(message.thumbs, widget_class)

    def show(self, view: TrajectoryView) -> None:
        first = self.view is None or self.view.id != view.id
        self.view = view
        head = Text()
        head.append(f"Trajectory {view.id}", style="bold")
        if view.contradictions:
            n = len(view.contradictions)
            head.append(f" {CONTRADICTION} {n} contradiction{'s' if n != 1 else ''} (x)", style="bold magenta")
        pos = view.siblings.index(view.id) + 1 if view.id in view.siblings else 0
        head.append(
            visible(
                f" ({pos}/{len(view.siblings)}) · {view.run_name} · {view.mode} · {view.benchmark} "
                f"task {view.source_id} · {view.status}"
            )
        )
        tokens = token_total(view.usage)
        if tokens:
            head.append(f" · {tokens:,} tokens")
        if view.checkpoints:
            head.append(
                f" · checkpoints {view.passed}/{view.checkpoints}",
                style="green" if view.passed == view.checkpoints else "yellow",
            )
        if view.edited_after_run:
            head.append(
                f"  edited after this run (ran on revision {view.task_revision}, now "
                f"{view.current_revision}; `chainmark score {view.run_id}` scores the revision it ran on)",
                style="bold yellow",
            )
        self.query_one("#traj-head", Static).update(head)
        task = Text()
        task.append(clip(view.query, 400) + "\n")
        task.append("answer: ", style="dim")
        task.append(clip(view.final_answer, 200) or "—", style="bold")
        if view.gold or view.expected:
            task.append("   gold: ", style="dim")
            task.append(clip(view.gold or view.expected, 200))
        task.append("   scored: ", style="dim")
        if view.outcome is None:
            pending_here = "verdicts" in view.hidden
            task.append(
                "hidden until you rate (blind)" if pending_here else "hidden: blind work pending on this run",
                style="yellow",
            )
        else:
            right = view.outcome.right
            task.append(
                visible(view.outcome.describe()),
                style="dim" if right is None else "bold green" if right else "bold red",
            )
        for at, c in view.contradictions[:SHOWN_CONTRADICTIONS]:
            task.append(f"\n{CONTRADICTION} ", style="bold magenta")
            task.append(f"row {at + 1}: " if at is not None else "", style="bold")
            task.append(visible(c.line()), style="magenta")
        if len(view.contradictions) > SHOWN_CONTRADICTIONS:
            more = len(view.contradictions) - SHOWN_CONTRADICTIONS
            task.append(f"\n{CONTRADICTION} … {more} more (x walks the rows)", style="magenta")
        if view.error:
            task.append("\nerror: " + visible(view.error, keep_newlines=True), style="red")
        for m in view.unplaced:
            task.append(
                f"\n{'?' if m.hidden else '✓' if m.passed else '✗'} {visible(m.key)} ({visible(m.axis)}) "
                f"{clip(m.description, 120)} — no matching step",
                style="dim" if m.hidden else "green" if m.passed else "red",
            )
        self.query_one("#traj-task", Static).update(task)
        verdicts = [{"judge": j.who, "label": j.value, "rationale": j.note} for j in view.judgements if not j.human]
        ratings = [{"annotator": j.who, "value": j.value, "comment": j.note} for j in view.judgements if j.human]
        self.query_one(JudgementsPanel).show(verdicts, ratings, [], view.hidden)
        rows = self.query_one("#traj-rows", VerticalScroll)
        rows.remove_children()
        if first:
            self.cursor = 0
            self.expanded = set()
        rows.mount_all(
            [TrajectoryRow(r, i, expanded=i in self.expanded, query=self.search) for i, r in enumerate(view.rows)]
        )
        self._find()
        self.cursor = min(self.cursor, max(0, len(view.rows) - 1))
        self.call_after_refresh(self._highlight)
        if view.images:
            cm, images, tid = self.cm, dict(view.images), view.id
            self.fetch(
                ThumbnailsLoaded,
                lambda s: ThumbnailsLoaded(tid, {a: preview(cm.blobs.get(sha, s), THUMB) for a, sha in images.items()}),
            )

    def _highlight(self) -> None:
        for row in self.query(TrajectoryRow):
            row.set_class(row.index == self.cursor, "-cursor")
            if row.index == self.cursor:
                row.scroll_visible(animate=False)

    def action_move(self, delta: int) -> None:
        if self.view and self.view.rows:
            self.cursor = max(0, min(len(self.view.rows) - 1, self.cursor + delta))
            self._highlight()
            self._status()

    def action_sibling(self, delta: int) -> None:
        if self.view and self.view.id in self.view.siblings:
            ids = self.view.siblings
            k = ids.index(self.view.id) + delta
            if 0 <= k < len(ids):
                self.trajectory_id = ids[k]
                self.refresh_data()

    def action_back(self) -> None:
        self.app.pop_screen()

    def _row(self, index: int) -> TrajectoryRow | None:
        """The widget of a row of the trajectory shown (not one of the last, still being removed)."""
        if not self.view or not 0 <= index < len(self.view.rows):
            return None
        row = self.view.rows[index]
        return next((r for r in self.query(TrajectoryRow) if r.row is row), None)

    def action_expand(self) -> None:
        """Expand the row under the cursor in full, or collapse it again."""
        row = self._row(self.cursor)
        if row is None:
            return
        if not row.truncated and not row.expanded:
            self.notify("this row is shown in full")
            return
        self.expanded ^= {row.index}
        row.show(expanded=row.index in self.expanded)
        self.call_after_refresh(row.scroll_visible, animate=False)

    def action_raw(self) -> None:
        """The stored events behind the model step under the cursor."""
        if not self.view or not self.view.rows:
            return
        step = self.view.rows[self.cursor].model
        if step is None or not step.raw:
            self.notify("no stored events on this row (only a reference step)")
            return
        self.app.push_screen(
            RawEventsScreen(f"Trajectory {self.view.id} · row {self.cursor + 1} · {step.name}", step.raw)
        )

    def action_zoom(self) -> None:
        """The images of the row under the cursor full size (the model's first, then the reference's);
        pressing ``z`` again in the zoom view's place shows the next one."""
        if not self.view or not self.view.rows:
            return
        row = self.view.rows[self.cursor]
        shas = [
            self.view.images[a]
            for step in (row.model, row.ref)
            if step is not None
            for a in step.asset_ids
            if a in self.view.images
        ]
        if not shas:
            self.notify("no image on this row (i shows the task's input image)")
            return
        self._zoom_next(shas, f"row {self.cursor + 1}")

    def action_input_image(self) -> None:
        """The task's input image(s) full size: what the model was shown."""
        if not self.view or not self.view.task_images:
            self.notify("this task has no input image")
            return
        self._zoom_next(list(self.view.task_images), f"task {self.view.task_id} input")

    def _zoom_next(self, shas: list[str], what: str) -> None:
        """Open the zoom view on the next of ``shas`` (cycling when the same key is pressed again)."""
        from tui.screens.image_zoom import ImageZoomScreen

        key = (what, tuple(shas))
        k = (self._zoomed[1] + 1) % len(shas) if self._zoomed and self._zoomed[0] == key else 0
        self._zoomed = (key, k)
        self.app.push_screen(ImageZoomScreen(shas[k], f"{what} · image {k + 1} of {len(shas)}"))

    def action_next_contradiction(self, delta: int) -> None:
        """Put the cursor on the next (previous) row whose judgements contradict the outcome."""
        rows = self.view.contradiction_rows if self.view else []
        if not rows:
            self.notify("no contradictions in this trajectory")
            return
        later = [k for k in rows if (k > self.cursor if delta > 0 else k < self.cursor)]
        self.cursor = (later[0] if delta > 0 else later[-1]) if later else (rows[0] if delta > 0 else rows[-1])
        self._highlight()
        self._status()

    # ---------------------------------------------------------------- search

    def action_search(self) -> None:
        box = self.query_one(SearchInput)
        box.value = self.search
        box.display = True
        box.focus()

    @on(Input.Submitted, "#traj-search")
    def search_submitted(self, event: Input.Submitted) -> None:
        self.search = event.value.strip()
        self._close_search()
        for row in self.query(TrajectoryRow):
            row.show(query=self.search)
        self._find()
        if self.matches:
            after = [i for i in self.matches if i >= self.cursor]
            self._go(after[0] if after else self.matches[0])

    @on(SearchInput.Closed)
    def _close_search(self) -> None:
        box = self.query_one(SearchInput)
        box.display = False
        self.set_focus(None)

    def _find(self) -> None:
        """Rows matching the search, and the ``k of N matches`` line."""
        rows = self.view.rows if self.view and self.search else []
        self.matches = [i for i, r in enumerate(rows) if row_matches(r, self.search)]
        self._status()

    def _status(self) -> None:
        line = self.query_one("#traj-search-status", Static)
        line.display = bool(self.search)
        if not self.search:
            return
        text = Text()
        text.append("/", style="bold")
        text.append(visible(self.search))
        if not self.matches:
            text.append("  no matches", style="yellow")
        else:
            k = self.matches.index(self.cursor) + 1 if self.cursor in self.matches else 0
            where = f"{k} of {len(self.matches)}" if k else f"{len(self.matches)}"
            text.append(f"  {where} match{'es' if len(self.matches) != 1 else ''}", style="bold")
            text.append("  (n next, N previous)", style="dim")
        line.update(text)

    def _go(self, index: int) -> None:
        """Put the cursor on a matching row, expanded when the match is only in its collapsed part."""
        self.cursor = index
        row = self._row(index)
        if row is not None and row.match_out_of_sight(self.search):
            self.expanded.add(index)
            row.show(expanded=True)
        self._highlight()
        self._status()

    def action_next_match(self, delta: int) -> None:
        if not self.search:
            self.notify("no search yet: / to search")
            return
        if not self.matches:
            self._status()
            return
        if self.cursor in self.matches:
            k = (self.matches.index(self.cursor) + delta) % len(self.matches)
        else:
            later = [i for i in self.matches if (i > self.cursor if delta > 0 else i < self.cursor)]
            k = self.matches.index(
                (later[0] if delta > 0 else later[-1])
                if later
                else (self.matches[0] if delta > 0 else self.matches[-1])
            )
        self._go(self.matches[k])
