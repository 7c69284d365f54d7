"""Home: benchmarks with task counts by status, my open assignments, recent runs.

The home screen is the first frame of every session, so it imports nothing from the store: its
worker loads the store and the data after the frame is up, and the status columns come with the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static
from tui.widgets.header import Header

from tui.messages import Result
from tui.safe_text import data_cells
from tui.screens.base import WorkScreen
from tui.widgets.footer import KeyFooter

if TYPE_CHECKING:
    from tui.data import HomeData


@dataclass
class HomeLoaded(Result):
    """Benchmarks with counts by status, my assignments, recent runs."""

    WHAT: ClassVar[str] = "home"
    data: HomeData


BENCHMARKS_TITLE = "Benchmarks"


class HomeScreen(WorkScreen):
    LOAD_FAILURES = {
        HomeLoaded.WHAT: (
            "#benchmarks-title",
            f"{BENCHMARKS_TITLE}: could not be read (r tries again): ",
            "#benchmarks",
        )
    }
    BINDINGS = [
        Binding("t", "tasks", "Tasks", id="home.tasks"),
        Binding("q", "my_queue", "My queue", id="home.my_queue"),
        Binding("enter", "open_benchmark", "Open benchmark", show=False, id="home.open_benchmark"),
        Binding("n", "new_task", "New task", id="home.new_task"),
        Binding("b", "new_benchmark", "New benchmark", tooltip="Create a benchmark", id="home.new_benchmark"),
        Binding("r", "refresh", "Refresh", id="home.refresh"),
        Binding("m", "open('runs')", "Runs", id="home.open_runs"),
        Binding("v", "open('rate')", "Rate", id="home.open_rate"),
        Binding("p", "open('prefs')", "Preferences", id="home.open_prefs"),
        Binding("a", "open('adjudicate')", "Adjudicate", id="home.open_adjudicate"),
        Binding("g", "open('agreement')", "Agreement", id="home.open_agreement"),
        Binding("o", "open('reports')", "Reports", id="home.open_reports"),
        Binding("u", "rubric", "Rubric", show=False, tooltip="The selected benchmark's judge rubric", id="home.rubric"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._select_next: str | None = None  # a benchmark to put the cursor on once the table is filled

    def action_open(self, name: str) -> None:
        from tui.screens.review.nav import screen_for

        self.app.push_screen(screen_for(name))

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="home"):
            yield Static(BENCHMARKS_TITLE, id="benchmarks-title", classes="section-title")
            yield DataTable(id="benchmarks", cursor_type="row", zebra_stripes=True)
            with Horizontal(id="home-lower"):
                with Vertical():
                    yield Static("My assignments", classes="section-title")
                    yield DataTable(id="assignments", cursor_type="row")
                with Vertical():
                    yield Static("Recent runs", classes="section-title")
                    yield DataTable(id="runs", cursor_type="row")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#assignments", DataTable).add_columns("kind", "target", "scale")
        self.query_one("#runs", DataTable).add_columns("run", "benchmark", "mode", "status", "created")
        self.query_one("#benchmarks", DataTable).loading = True

    def refresh_data(self) -> None:
        actor = self.cm.actor

        def read(session):  # type: ignore[no-untyped-def]
            from tui.data import home_data

            return HomeLoaded(home_data(session, actor))

        self.fetch(HomeLoaded, read)

    def action_refresh(self) -> None:
        self.refresh_data()

    @on(HomeLoaded)
    def show(self, message: HomeLoaded) -> None:
        self.cm.startup_done()
        data: HomeData = message.data
        self.query_one("#benchmarks-title", Static).update(BENCHMARKS_TITLE)
        table = self.query_one("#benchmarks", DataTable)
        table.loading = False
        table.clear()
        if not table.columns:
            table.add_columns("benchmark", "format", "tools", "tasks", *data.statuses)
        for b in data.benchmarks:
            table.add_row(
                *data_cells(b.name, b.source_format, b.tool_set or ""),
                b.tasks,
                *(b.by_status.get(st, 0) for st in data.statuses),
                key=b.name,
            )
        self._select_made(table)
        assignments = self.query_one("#assignments", DataTable)
        assignments.clear()
        for a in data.assignments:
            assignments.add_row(*data_cells(a.target_kind, a.target_id, a.scale), key=str(a.id))
        runs = self.query_one("#runs", DataTable)
        runs.clear()
        for r in data.runs:
            runs.add_row(
                *data_cells(
                    r["name"] or f"#{r['id']}",
                    r["benchmark"],
                    r["mode"],
                    r["status"],
                    (r["created_at"] or "")[:16].replace("T", " "),
                ),
                key=str(r["id"]),
            )

    def _current_benchmark(self) -> str:
        table = self.query_one("#benchmarks", DataTable)
        if table.row_count == 0:
            return ""
        key: Any = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key or "")

    def action_tasks(self) -> None:
        from tui.screens.task_list import TaskListScreen

        self.app.push_screen(TaskListScreen())

    def action_my_queue(self) -> None:
        """The tasks assigned to me for authoring (``chainmark tasks assign``), as a task list."""
        from store.db import acting_user
        from tui.screens.task_list import TaskListScreen

        self.app.push_screen(TaskListScreen(assignee=acting_user(self.cm.actor)))

    def action_open_benchmark(self) -> None:
        from tui.screens.task_list import TaskListScreen

        self.app.push_screen(TaskListScreen(benchmark=self._current_benchmark()))

    def action_rubric(self) -> None:
        """The selected benchmark's judge rubric (chainmark-format benchmarks), to read and version."""
        from tui.screens.rubric import RubricScreen

        name = self._current_benchmark()
        if name:
            self.app.push_screen(RubricScreen(name))

    @on(DataTable.RowSelected, "#benchmarks")
    def _benchmark_chosen(self, event: DataTable.RowSelected) -> None:
        self.action_open_benchmark()

    def _select_made(self, table: DataTable[Any]) -> None:
        """Put the cursor on the benchmark just created (the form's result), once the table has it."""
        name, self._select_next = self._select_next, None
        if name is not None:
            from textual.widgets.data_table import RowDoesNotExist

            try:
                table.move_cursor(row=table.get_row_index(name))
            except RowDoesNotExist:  # gone meanwhile (another annotator deleted it): the cursor stays
                return

    def action_new_benchmark(self) -> None:
        from tui.screens.new_benchmark import NewBenchmarkScreen

        def made(name: str | None) -> None:
            if name:
                self._select_next = name  # the reload on resuming shows it, selected
                self.notify(f"benchmark {name} created", timeout=3)

        self.app.push_screen(NewBenchmarkScreen(), made)

    def action_new_task(self) -> None:
        from tui.screens.new_task import NewTaskScreen

        self.app.push_screen(NewTaskScreen(self._current_benchmark()))
