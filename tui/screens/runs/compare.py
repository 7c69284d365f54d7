"""Run comparison: the runs' outcomes task by task, largest disagreement first, and side by side.

Scoring happens in a worker (``evaluation.compare.results_in``, read only); sorting and filtering
the scored results is cheap and happens here. Enter opens the runs' trajectories on that task in
columns aligned by step index; ``g`` adds the reference chain as one more column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static
from tui.widgets.header import Header

from evaluation.compare import FILTERS, Comparison, RunResults, compare, results_in
from tui.messages import Result
from tui.screens.base import WorkScreen
from tui.widgets.footer import KeyFooter
from tui.widgets.review.event_text import clip
from tui.widgets.review.trajectory_row import step_text

FILTER_CYCLE: tuple[str | None, ...] = (None, *FILTERS)


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


@dataclass
class ComparisonLoaded(Result):
    """Every run's per-task results, scored in ``mode``."""

    WHAT: ClassVar[str] = "comparison"
    mode: str
    results: list[RunResults]


@dataclass
class SideBySideLoaded(Result):
    """The runs' trajectories on one task (None where a run has none)."""

    WHAT: ClassVar[str] = "trajectories"
    views: list[Any]


def _visible_results(session: Any, ids: list[int], mode: str, embedder: str, viewer: str | None) -> list[RunResults]:
    """The runs scored, then as ``viewer`` may see them (blind mode withholds model and scores)."""
    from tui.blind_view import scope_for, withhold_results

    results = results_in(session, ids, mode=mode, embedder=embedder)
    return withhold_results(scope_for(session, viewer), results)


class CompareScreen(WorkScreen):
    """Tasks × runs: each run's status, per-task score and answer; where do the models differ?"""

    LOAD_FAILURES = {ComparisonLoaded.WHAT: ("#cmp-summary", "could not score the runs: ", "#cmp-table")}

    DEFAULT_CSS = """
    CompareScreen #cmp-summary { height: auto; max-height: 8; padding: 0 1; }
    CompareScreen #cmp-table { height: 1fr; }
    CompareScreen #cmp-notes { height: auto; max-height: 3; padding: 0 1; color: $warning; }
    """
    BINDINGS = [
        Binding("enter", "open", "Side by side", id="compare.open"),
        Binding("f", "cycle_filter", "Filter", id="compare.filter"),
        Binding("s", "toggle_sort", "Sort", id="compare.sort"),
        Binding("m", "toggle_mode", "faithful/fixed", id="compare.mode"),
        Binding("escape", "back", "Back", id="compare.back"),
    ]

    def __init__(self, run_ids: list[int], *, mode: str = "faithful", embedder: str = "minilm") -> None:
        super().__init__()
        self.run_ids = list(run_ids)
        self.mode = mode
        self.embedder = embedder
        self.sort = "disagreement"
        self.filter: str | None = None
        self.results: list[RunResults] | None = None
        self.comparison: Comparison | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("scoring the runs…", id="cmp-summary")
        yield DataTable(id="cmp-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="cmp-notes")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#cmp-table", DataTable).focus()

    def refresh_data(self) -> None:
        ids, mode, embedder, viewer = self.run_ids, self.mode, self.embedder, self.cm.actor
        self.query_one("#cmp-table", DataTable).loading = True
        self.fetch(ComparisonLoaded, lambda s: ComparisonLoaded(mode, _visible_results(s, ids, mode, embedder, viewer)))

    @on(ComparisonLoaded)
    def loaded(self, message: ComparisonLoaded) -> None:
        mode, results = message.mode, message.results
        if mode != self.mode:
            return
        self.results = results
        self.query_one("#cmp-table", DataTable).loading = False
        self.show()

    def show(self) -> None:
        if self.results is None:
            return
        try:
            cmp = compare(self.results, sort=self.sort, filter=self.filter)
        except ValueError as exc:
            self.notify(str(exc), severity="warning")
            self.filter = None
            cmp = compare(self.results, sort=self.sort)
        self.comparison = cmp
        table = self.query_one("#cmp-table", DataTable)
        table.clear(columns=True)
        table.add_column("task", width=8)
        table.add_column("spread", width=6)
        for r in cmp.runs:
            table.add_column(clip(r["label"], 26), width=26)
        table.add_column("query")
        for row in cmp.rows:
            cells: list[Any] = [str(row.source_id or row.task_id), _score(row.spread)]
            for c in row.cells:
                cell = Text()
                if c.hidden:
                    cell.append("hidden ", style="dim")
                else:
                    cell.append("✓ " if c.right else "✗ ", style="green" if c.right else "red")
                    cell.append(f"{_score(c.score)} ")
                if c.status != "done":
                    cell.append(f"{c.status} ", style="yellow")
                cell.append(clip(" ".join(c.answer.split()), 60))
                cells.append(cell)
            cells.append(clip(" ".join(row.query.split()), 120))
            table.add_row(*cells, key=str(row.task_id))
        s = cmp.summary
        head = Text()
        head.append(f"{s['shared_tasks']} shared task(s), {s['differing']} differ", style="bold")
        head.append(
            f" · mode {self.mode} · sort {self.sort} · filter {self.filter or 'none'} · showing {len(cmp.rows)}\n"
        )
        for letter, r in zip("AB" if len(cmp.runs) == 2 else [""] * len(cmp.runs), cmp.runs):
            head.append(
                f"{letter + ' = ' if letter else ''}{r['label']}: mean {_score(s['mean'][r['run_id']])}, "
                f"right {'–' if s['right'][r['run_id']] is None else s['right'][r['run_id']]}\n"
            )
        for p in s["pairwise"]:
            head.append(
                f"run {p['a']} vs run {p['b']}: {p['wins']} wins, {p['ties']} ties, {p['losses']} losses\n", style="dim"
            )
        self.query_one("#cmp-summary", Static).update(head)
        self.query_one("#cmp-notes", Static).update("\n".join(cmp.notes))

    def action_cycle_filter(self) -> None:
        k = FILTER_CYCLE.index(self.filter)
        self.filter = FILTER_CYCLE[(k + 1) % len(FILTER_CYCLE)]
        if self.filter in ("a-right-b-wrong", "b-right-a-wrong") and len(self.run_ids) != 2:
            self.filter = "all-wrong"
        self.show()

    def action_toggle_sort(self) -> None:
        self.sort = "task" if self.sort == "disagreement" else "disagreement"
        self.show()

    def action_toggle_mode(self) -> None:
        self.mode = "fixed" if self.mode == "faithful" else "faithful"
        self.refresh_data()

    @on(DataTable.RowSelected, "#cmp-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        if self.comparison is None or not self.comparison.rows:
            return
        table = self.query_one("#cmp-table", DataTable)
        row = self.comparison.rows[min(table.cursor_row, len(self.comparison.rows) - 1)]
        columns = [(r["label"], c.trajectory_id, c.answer, c.score) for r, c in zip(self.comparison.runs, row.cells)]
        withheld = [r["hidden"] for r in self.comparison.runs if r.get("hidden")]
        self.app.push_screen(SideBySideScreen(row.task_id, columns, notes=withheld))

    def action_back(self) -> None:
        self.app.pop_screen()


class SideBySideScreen(WorkScreen):
    """Several runs' trajectories on one task, one column each, aligned by step index."""

    LOAD_FAILURES = {SideBySideLoaded.WHAT: ("#sbs-task", "could not load the trajectories: ", None)}

    DEFAULT_CSS = """
    SideBySideScreen #sbs-task { height: auto; max-height: 8; padding: 0 1; }
    SideBySideScreen .sbs-head { height: auto; background: $panel; }
    SideBySideScreen .sbs-cell { width: 1fr; padding: 0 1; }
    SideBySideScreen .sbs-row { height: auto; border-bottom: solid $panel; }
    SideBySideScreen #sbs-rows { height: 1fr; }
    """
    BINDINGS = [
        Binding("g", "toggle_reference", "Reference", id="sbs.reference"),
        Binding("escape", "back", "Back", id="sbs.back"),
    ]

    def __init__(
        self, task_id: int, columns: list[tuple[str, int | None, str, float | None]], notes: list[str] | None = None
    ) -> None:
        """``columns``: (run label, trajectory id, the answer as scored, per-task score) per run; ``notes``:
        what blind mode withholds and why, shown under the task."""
        super().__init__()
        self.task_id = task_id
        self.columns = columns
        self.notes = list(notes or [])
        self.views: list[Any] = []
        self.with_reference = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="sbs-task")
        yield Horizontal(id="sbs-head", classes="sbs-head")
        yield VerticalScroll(id="sbs-rows")
        yield KeyFooter()

    def refresh_data(self) -> None:
        from tui.screens.runs.trajectory_data import trajectory_view

        ids, viewer = [col[1] for col in self.columns], self.cm.actor
        self.fetch(
            SideBySideLoaded,
            lambda s: SideBySideLoaded([trajectory_view(s, t, viewer) if t is not None else None for t in ids]),
        )

    @on(SideBySideLoaded)
    def loaded(self, message: SideBySideLoaded) -> None:
        self.views = message.views
        self.show()

    def show(self) -> None:
        views = self.views
        first = next((v for v in views if v is not None), None)
        task = Text()
        if first is not None:
            task.append(f"task {first.source_id} · {first.benchmark}\n", style="bold")
            task.append(clip(first.query, 400))
            if first.expected:
                task.append("\nexpected: ", style="dim")
                task.append(clip(first.expected, 200))
        for note in self.notes:
            task.append(f"\n{note}", style="yellow")
        self.query_one("#sbs-task", Static).update(task)
        titles: list[Text] = []
        if self.with_reference:
            titles.append(Text("Reference chain", style="bold"))
        for (label, _, answer, score), v in zip(self.columns, views):
            t = Text(label, style="bold")
            if v is not None:
                t.append(f" · {v.status} · answer: ")
                t.append(clip(" ".join((answer or v.final_answer).split()), 80) or "—")
                t.append(f" · score {_score(score)}")
            titles.append(t)
        head = self.query_one("#sbs-head", Horizontal)
        head.remove_children()
        head.mount_all([Static(t, classes="sbs-cell") for t in titles])
        columns = [[r.model for r in v.rows if r.model is not None] if v is not None else [] for v in views]
        if self.with_reference:
            ref = [r.ref for r in first.rows if r.ref is not None] if first is not None else []
            columns = [ref, *columns]
        depth = max((len(c) for c in columns), default=0)
        rows = self.query_one("#sbs-rows", VerticalScroll)
        rows.remove_children()
        rows.mount_all(
            [
                Horizontal(
                    *[Static(step_text(c[i] if i < len(c) else None), classes="sbs-cell") for c in columns],
                    classes="sbs-row",
                )
                for i in range(depth)
            ]
        )

    def action_toggle_reference(self) -> None:
        self.with_reference = not self.with_reference
        self.show()

    def action_back(self) -> None:
        self.app.pop_screen()
