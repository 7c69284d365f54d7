"""Task list: a virtual list over every task with filters that re-query on each keystroke."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Input, Select, Static
from tui.widgets.header import Header

from annotation.tasks import STATUSES
from tui.data import TaskFilter, TaskRow, filter_choices, task_ids, task_rows
from tui.messages import RecordsChanged, Result
from tui.screens.base import WorkScreen
from tui.widgets.footer import KeyFooter
from tui.widgets.selection import data_options, is_nothing
from tui.widgets.task_table import PAGE, TaskTable, header_text

INDEX_DELAY = 0.15
HEARD_DELAY = 0.3  # other people's commits arrive in bursts (an import, a chain): one reload per burst
"""Seconds of quiet typing before the full id index of a filter is computed."""


@dataclass
class ChoicesLoaded(Result):
    """Distinct values for the filter drop-downs (``tui.data.filter_choices``)."""

    WHAT: ClassVar[str] = "filters"
    choices: dict[str, list[str]]


@dataclass
class FirstPageLoaded(Result):
    """The first screenful of a filter's tasks (answers a keystroke before the full index is known)."""

    WHAT: ClassVar[str] = "tasks"
    filter: TaskFilter
    rows: list[TaskRow]


@dataclass
class IndexLoaded(Result):
    """Every id matching a filter, in order: sizes the virtual list."""

    WHAT: ClassVar[str] = "task index"
    filter: TaskFilter
    ids: list[int]


class TaskListScreen(WorkScreen):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # filters in two rows when narrow (chainmark.tcss)
    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="task_list.focus_search"),
        Binding("escape", "back", "Back", id="task_list.back"),
        Binding("n", "new_task", "New task", id="task_list.new_task"),
        Binding("ctrl+r", "clear_filters", "Clear filters", id="task_list.clear_filters"),
    ]

    def __init__(self, benchmark: str = "", assignee: str = "") -> None:
        super().__init__()
        self.initial_benchmark = benchmark
        self.initial_assignee = assignee
        self.filter = TaskFilter(benchmark=benchmark, assignee=assignee)
        self.shown_filter: TaskFilter | None = None
        self._first_page: tuple[TaskFilter, list] | None = None  # type: ignore[type-arg]
        self._index: tuple[TaskFilter, list[int]] | None = None
        self._index_timer: Timer | None = None
        self._index_asked: TaskFilter | None = None  # the filter whose index was last asked for
        self._heard_timer: Timer | None = None

    @property
    def index_pending(self) -> bool:
        """Whether the whole list for the current filter is still to come (it waits for a pause in typing)."""
        asked = self._index_asked == self.filter
        return asked and (self._index is None or self._index[0] != self.filter)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Input(placeholder="search query text  (/)", id="text")
            yield Select([], prompt="benchmark", id="benchmark")
            yield Select([(s, s) for s in STATUSES], prompt="status", id="status")
            yield Select([], prompt="category", id="category")
            yield Select([], prompt="level", id="level")
            yield Select([], prompt="assignee", id="assignee")
        yield Static("", id="task-count")
        yield Static("", id="task-header")
        yield TaskTable(id="tasks")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.fetch(ChoicesLoaded, lambda s: ChoicesLoaded(filter_choices(s)))
        self.query_one(TaskTable).focus()

    def on_resize(self) -> None:
        self.query_one("#task-header", Static).update(header_text(self.size.width - 1, self.size.width))

    def refresh_data(self) -> None:
        # Back from the editor (or after a save): what is held is stale, so the reloaded first page
        # is shown even though an id index for this filter already arrived.
        self._index = None
        self.reload()

    def reload(self) -> None:
        flt = self.filter
        # Two phases, so a keystroke answers as soon as the first screenful is known: the first
        # page (LIMIT stops the scan early), then the full id index that sizes the virtual list.
        # The index waits for a pause in typing so a burst of keystrokes does not queue full scans.
        self.fetch(FirstPageLoaded, lambda s: FirstPageLoaded(flt, task_rows(s, flt, 0, PAGE)))
        if self._index_timer is not None:
            self._index_timer.stop()
        self._index_asked = flt
        self._index_timer = self.set_timer(
            INDEX_DELAY, lambda: self.fetch(IndexLoaded, lambda s: IndexLoaded(flt, task_ids(s, flt)))
        )

    @on(RecordsChanged)
    def _heard(self, message: RecordsChanged) -> None:
        """Tasks changed elsewhere (PostgreSQL notices): show them, once per burst of commits."""
        notice = message.notice
        if not self.is_current or not (notice.everything or any(c.task_id is not None for c in notice.changes)):
            return
        if self._heard_timer is not None:
            self._heard_timer.stop()
        self._heard_timer = self.set_timer(HEARD_DELAY, self.refresh_data)

    @on(ChoicesLoaded)
    def _choices_loaded(self, message: ChoicesLoaded) -> None:
        choices = message.choices
        self._set_options("benchmark", choices["benchmark"])
        self._set_options("category", choices["category"])
        self._set_options("level", choices["level"])
        self._set_options("assignee", choices["annotator"])
        if self.initial_benchmark in choices["benchmark"]:
            with self.prevent(Select.Changed):
                self.query_one("#benchmark", Select).value = self.initial_benchmark
        if self.initial_assignee in choices["annotator"]:
            with self.prevent(Select.Changed):
                self.query_one("#assignee", Select).value = self.initial_assignee

    @on(FirstPageLoaded)
    def _first_page_loaded(self, message: FirstPageLoaded) -> None:
        flt, first = message.filter, message.rows
        if flt != self.filter:
            return  # an older filter's answer; the newer one is on its way
        if self._index is not None and self._index[0] == flt:
            return  # the full index already arrived
        same = flt == self.shown_filter
        self.shown_filter = flt
        self._first_page = (flt, first)
        self.query_one(TaskTable).show([r.id for r in first], first, self._loader(flt), keep_cursor=same)
        self._show_count(_count_text(len(first), flt) if len(first) < PAGE else "counting…")

    @on(IndexLoaded)
    def _index_loaded(self, message: IndexLoaded) -> None:
        flt, ids = message.filter, message.ids
        if flt != self.filter:
            return
        self._index = (flt, ids)
        same = flt == self.shown_filter
        self.shown_filter = flt
        first = self._first_page[1] if self._first_page and self._first_page[0] == flt else []
        self.query_one(TaskTable).show(ids, first, self._loader(flt), keep_cursor=same)
        self._show_count(_count_text(len(ids), flt))

    def _show_count(self, text: str) -> None:
        # The count line has a fixed size (CSS), so a new count repaints one line, not the layout.
        self.query_one("#task-count", Static).update(text, layout=False)

    def _loader(self, flt: TaskFilter):  # type: ignore[no-untyped-def]
        cm = self.cm
        return lambda first_id, n: cm.read(lambda s: task_rows(s, flt, first_id, n))

    def _set_options(self, name: str, values: list[str]) -> None:
        select = self.query_one(f"#{name}", Select)
        with self.prevent(Select.Changed):
            select.set_options(data_options((v, v) for v in values))

    def _update(self, **changes: str) -> None:
        fields = {**self.filter.__dict__, **changes}
        self.filter = TaskFilter(**fields)
        self.reload()

    @on(Input.Changed, "#text")
    def _text_changed(self, event: Input.Changed) -> None:
        self._update(text=event.value.strip())

    @on(Input.Submitted, "#text")
    def _text_submitted(self) -> None:
        """Enter in the search opens the highlighted (first) match; with none, the list takes focus."""
        table = self.query_one(TaskTable)
        table.focus()
        if table.highlighted_id is not None and self.shown_filter == self.filter:
            self._open_task(table.highlighted_id)

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        value = "" if is_nothing(event.value) else str(event.value)
        self._update(**{str(event.select.id): value})

    @on(TaskTable.Opened)
    def _open(self, event: TaskTable.Opened) -> None:
        self._open_task(event.task_id)

    def _open_task(self, task_id: int) -> None:
        """The editor, with this list's tasks as its next/previous sequence ("n of N")."""
        from tui.screens.task_editor import TaskEditorScreen

        self.app.push_screen(TaskEditorScreen(task_id, sequence=list(self.query_one(TaskTable).ids)))

    def action_focus_search(self) -> None:
        self.query_one("#text", Input).focus()

    def action_back(self) -> None:
        if self.focused is not None and not isinstance(self.focused, TaskTable):
            self.query_one(TaskTable).focus()
        else:
            self.app.pop_screen()

    def action_clear_filters(self) -> None:
        with self.prevent(Input.Changed, Select.Changed):
            self.query_one("#text", Input).value = ""
            for name in ("benchmark", "status", "category", "level", "assignee"):
                self.query_one(f"#{name}", Select).clear()
        self.filter = TaskFilter()
        self.reload()

    def action_new_task(self) -> None:
        from tui.screens.new_task import NewTaskScreen

        self.app.push_screen(NewTaskScreen(self.filter.benchmark))


def _count_text(n: int, flt: TaskFilter) -> str:
    """The count line: "1 task", "12 matching tasks" (the first page says it too when it is all there is)."""
    noun = "task" if n == 1 else "tasks"
    return f"{n:,} {noun if flt.is_empty() else 'matching ' + noun}"
