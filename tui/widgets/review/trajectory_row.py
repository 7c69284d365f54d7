"""One aligned row of the trajectory viewer: reference step | checkpoint marks | model step.

Each step reads as a transcript (``step_view``): long parts collapsed until the row is expanded,
search matches highlighted. Text comes first; produced images are mounted later (``add_images``) once a worker has shrunk them,
so opening a long trajectory never waits on image decoding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from tui.safe_text import visible
from tui.widgets.review.event_text import clip
from tui.widgets.review.step_view import collapsed_haystack, render_step, step_haystack

if TYPE_CHECKING:
    from evaluation.contradictions import Contradiction
    from evaluation.scoring.item_outcome import StepMark
    from tui.screens.runs.trajectory_data import Judgement, Mark, Row, Step

CONTRADICTION = "⚠"  # the marker of a judgement that contradicts the answer's score or its step


def step_text(step: "Step | None", width: int = 400) -> Text:
    """The step in a few clipped lines (side-by-side comparison, where every step gets one cell)."""
    out = Text()
    if step is None:
        out.append("—", style="dim")
        return out
    style = "bold" if step.ok else "bold red"
    out.append(visible(step.name), style=style)
    if step.call:
        out.append(f" {clip(step.call, width)}")
    if step.code:
        out.append(f"\n{clip(step.code, width)}", style="cyan")
    if step.thought:
        out.append("\n" + clip(step.thought, width), style="italic dim")
    if step.result:
        out.append("\n→ ", style="dim")
        out.append(clip(step.result, width), style="" if step.ok else "red")
    return out


def marks_text(
    marks: "tuple[Mark, ...]",
    judgements: "tuple[Judgement, ...]",
    steps: "tuple[StepMark, ...]" = (),
    contradictions: "tuple[Contradiction, ...]" = (),
) -> Text:
    """The middle column: the scorer's step marks (step mode), checkpoint marks, verdicts and ratings,
    then any contradiction among them, flagged so it cannot be missed."""
    out = Text()
    for sm in steps:
        if out:
            out.append("\n")
        out.append(sm.label(), style="bold green" if sm.ok else "bold yellow" if sm.tool else "bold red")
    for m in marks:
        if out:
            out.append("\n")
        if m.hidden:
            out.append("? ", style="dim")
        else:
            out.append("✓ " if m.passed else "✗ ", style="bold green" if m.passed else "bold red")
        out.append(visible(m.key), style="bold")
        out.append(f" {visible(m.axis)}", style="dim")
        for j in m.judgements:
            out.append(f"\n  {visible(j.who)}: {visible(j.value)}", style="green" if j.human else "cyan")
    for j in judgements:
        if out:
            out.append("\n")
        out.append(f"{visible(j.who)}: {visible(j.value)}", style="green" if j.human else "cyan")
    for c in contradictions:
        if out:
            out.append("\n")
        out.append(f"{CONTRADICTION} {visible(c.who)}: {visible(c.text)}", style="bold magenta")
    return out


class TrajectoryRow(Horizontal):
    DEFAULT_CSS = """
    TrajectoryRow { height: auto; border-bottom: solid $panel; }
    TrajectoryRow.-cursor { background: $boost; border-left: thick $accent; }
    TrajectoryRow.-contradicts { border-left: thick $error; }
    TrajectoryRow.-contradicts.-cursor { border-left: thick $accent; }
    TrajectoryRow > .cell { width: 1fr; height: auto; padding: 0 1; }
    TrajectoryRow > .marks { width: 24; height: auto; padding: 0 1; }
    TrajectoryRow .thumbs { height: auto; }
    TrajectoryRow .thumbs > * { width: 24; height: 8; margin-right: 1; }
    """

    def __init__(self, row: "Row", index: int, *, expanded: bool = False, query: str = "") -> None:
        super().__init__()
        self.row = row
        self.index = index
        self.expanded = expanded
        self.query_text = query
        self.set_class(bool(row.contradictions), "-contradicts")
        collapsed = {side: render_step(getattr(row, side), query=query) for side in ("ref", "model")}
        # something is hidden while collapsed (so expanding the row shows more)
        self.truncated = any(r.truncated for r in collapsed.values())
        self._parts = {
            side: self._render_side(side) if expanded else collapsed[side].renderable for side in ("ref", "model")
        }

    def _render_side(self, side: str) -> Any:
        return render_step(getattr(self.row, side), expanded=self.expanded, query=self.query_text).renderable

    def compose(self) -> ComposeResult:
        with Vertical(classes="cell ref"):
            yield Static(self._parts["ref"], classes="step")
            yield Horizontal(classes="thumbs")
        yield Static(
            marks_text(self.row.marks, self.row.judgements, self.row.steps, self.row.contradictions),
            classes="marks",
        )
        with Vertical(classes="cell model"):
            yield Static(self._parts["model"], classes="step")
            yield Horizontal(classes="thumbs")

    def show(self, *, expanded: bool | None = None, query: str | None = None) -> None:
        """Re-render the steps expanded or collapsed, with this search's matches highlighted."""
        if expanded is not None:
            self.expanded = expanded
        if query is not None:
            self.query_text = query
        self.set_class(self.expanded, "-expanded")
        for side in ("ref", "model"):
            self._parts[side] = self._render_side(side)
            box = next(self.query(f".{side} > .step").results(Static), None)
            if box is not None:  # not composed yet: compose uses the new parts
                box.update(self._parts[side])

    def match_out_of_sight(self, query: str) -> bool:
        """The row matches, but only in what collapsing hides."""
        q = query.lower()
        return (
            not self.expanded
            and self.matches(query)
            and q not in collapsed_haystack(self.row.ref)
            and q not in collapsed_haystack(self.row.model)
        )

    def matches(self, query: str) -> bool:
        return row_matches(self.row, query)

    def add_images(self, thumbs: dict[int, Any], widget_class: type) -> None:
        for side, step in (("ref", self.row.ref), ("model", self.row.model)):
            if step is None:
                continue
            images = [thumbs[a] for a in step.asset_ids if a in thumbs]
            if images:
                boxes = self.query(f".{side} .thumbs").results(Horizontal)
                box = next(boxes, None)
                if box is None:  # thumbnails can land before a freshly mounted row has composed its parts
                    self.call_after_refresh(self.add_images, thumbs, widget_class)
                    return
                box.remove_children()
                box.mount_all([widget_class(im) for im in images])


def row_matches(row: "Row", query: str) -> bool:
    """The search text is somewhere in the row's steps (case ignored)."""
    q = query.lower()
    return bool(q) and (q in step_haystack(row.ref) or q in step_haystack(row.model))
