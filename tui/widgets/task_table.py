"""A virtual task list: a line-API ScrollView over an id index, rows fetched a page at a time.

Only the rows on screen exist as text; a page the viewport needs and the cache lacks is fetched
by a thread worker (keyset: rows with id ≥ the page's first id) and the widget repaints when it
arrives. 100,000 tasks cost one list of ints and a handful of cached pages.
"""

from __future__ import annotations

from typing import Callable, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.safe_text import visible
from textual.worker import get_current_worker

from tui.data import TaskRow

PAGE = 64
COLUMNS: list[tuple[str, int]] = [
    ("id", 7),
    ("status", 10),
    ("benchmark", 14),
    ("level", 7),
    ("category", 16),
    ("source", 14),
    ("query", 0),
]
QUERY_MIN = 30
"""Cells the query keeps at least: on a narrow terminal (80 columns) the columns in ``NARROW_DROPS`` go,
in that order, rather than leave the query ten characters that tell one task from another by nothing."""
NARROW_DROPS = ("source", "level")

PageLoader = Callable[[int, int], list[TaskRow]]
"""``loader(first_id, limit)``: rows of the current filter from ``first_id`` on (runs in a thread)."""


def columns_for(width: int) -> list[tuple[str, int]]:
    """The columns shown at ``width`` (the table's full width): every one while the query keeps
    ``QUERY_MIN`` cells, else without the least needed ones (``NARROW_DROPS``)."""
    columns = list(COLUMNS)
    for name in NARROW_DROPS:
        if width - sum(w for _, w in columns) >= QUERY_MIN:
            break
        columns = [c for c in columns if c[0] != name]
    return columns


def header_text(width: int, layout_width: int | None = None) -> str:
    columns = columns_for(width if layout_width is None else layout_width)
    return _format(columns, {name: name for name, _ in columns}, width)


def _format(columns: list[tuple[str, int]], cells: dict[str, str], width: int) -> str:
    """One row of ``width`` terminal cells. Widths are counted in cells, not characters: an emoji or a
    CJK character takes two, and counting it as one pushed every later column (and the row's end) right."""
    out = []
    used = 0
    for name, w in columns:
        if w == 0:
            w = max(0, width - used)
        value = visible(cells.get(name, ""))  # data: control characters shown escaped, never sent to the terminal
        text = value if cell_len(value) <= w - 1 else set_cell_size(value, max(0, w - 2)) + "…"
        out.append(set_cell_size(text, w))
        used += w
    return set_cell_size("".join(out), width)


class TaskTable(ScrollView, can_focus=True):
    """Tasks of the current filter; Enter opens the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False, id="task_table.cursor_minus1"),
        Binding("down", "cursor(1)", "Down", show=False, id="task_table.cursor_1"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="task_table.page_minus1"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="task_table.page_1"),
        Binding("home", "jump(0)", "First", show=False, id="task_table.jump_0"),
        Binding("end", "jump(-1)", "Last", show=False, id="task_table.jump_minus1"),
        Binding("enter", "open", "Open", id="task_table.open"),
    ]
    DEFAULT_CSS = """
    TaskTable { height: 1fr; }
    TaskTable > .task-table--cursor { background: $accent 40%; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"task-table--cursor"}

    cursor: reactive[int] = reactive(0)
    """Index (into the id list) of the highlighted row."""

    class Opened(Message):
        """Enter on a row: ``task_id`` is the task to open."""

        def __init__(self, task_id: int) -> None:
            super().__init__()
            self.task_id = task_id

    class PageArrived(Message):
        def __init__(self, generation: int, page: int, rows: list[TaskRow]) -> None:
            super().__init__()
            self.generation, self.page, self.rows = generation, page, rows

    def __init__(self, loader: PageLoader | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.loader = loader
        self.ids: list[int] = []
        self._pages: LRUCache[int, list[TaskRow]] = LRUCache(64)
        self._pending: set[int] = set()
        self._generation = 0
        self._line_styles: tuple[Style, Style] | None = None

    # ------------------------------------------------------------------ data in

    def show(self, ids: list[int], first_page: list[TaskRow], loader: PageLoader, *, keep_cursor: bool = False) -> None:
        """Replace the contents: a new id index, its first page, and how to fetch the rest."""
        keep = self.highlighted_id if keep_cursor else None
        self._generation += 1
        self.ids = ids
        self.loader = loader
        self._pages.clear()
        self._pending.clear()
        if ids and first_page:  # an empty first page (the index came first) is fetched like any other
            self._pages[0] = first_page
        self._resize_list(len(ids))
        if keep is not None and keep in ids:
            self.cursor = ids.index(keep)
        else:
            self.cursor = 0
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def _resize_list(self, rows: int) -> None:
        """Set the list's height. A new height normally costs a layout of the whole screen (a third
        of a keystroke's time); while the scrollbar stays as it is, only the scrollbar's thumb and
        this widget need repainting, so the new size is set without one."""
        window = self.scrollable_content_region.height
        if self.is_mounted and window and (self.virtual_size.height > window) == (rows > window):
            self.set_reactive(TaskTable.virtual_size, Size(self.virtual_size.width, rows))
            if self.show_vertical_scrollbar:
                self.vertical_scrollbar.window_virtual_size = rows
        else:
            self.virtual_size = Size(self.size.width, rows)

    @property
    def highlighted_id(self) -> int | None:
        return self.ids[self.cursor] if 0 <= self.cursor < len(self.ids) else None

    def row_at(self, index: int) -> TaskRow | None:
        page = self._pages.get(index // PAGE)
        if page is None:
            self._request(index // PAGE)
            return None
        want = self.ids[index]
        for row in page:
            if row.id == want:
                return row
        return None

    def _request(self, page: int) -> None:
        if page in self._pending or self.loader is None:
            return
        self._pending.add(page)
        generation, first_id, loader = self._generation, self.ids[page * PAGE], self.loader

        def fetch() -> None:
            rows = loader(first_id, PAGE)
            if not get_current_worker().is_cancelled:
                self.post_message(self.PageArrived(generation, page, rows))

        self.run_worker(fetch, thread=True, group="pages", exit_on_error=False)

    def on_task_table_page_arrived(self, message: TaskTable.PageArrived) -> None:
        message.stop()
        if message.generation != self._generation:
            return
        self._pending.discard(message.page)
        self._pages[message.page] = message.rows
        self.refresh()

    # ------------------------------------------------------------------ rendering

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.ids))

    def render_lines(self, crop: Region) -> list[Strip]:
        # The styles are the same for every line of one paint; looking them up walks the DOM.
        self._line_styles = (self.rich_style, self.get_component_rich_style("task-table--cursor"))
        try:
            return super().render_lines(crop)
        finally:
            self._line_styles = None

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base, cursor = self._line_styles or (self.rich_style, self.get_component_rich_style("task-table--cursor"))
        if index >= len(self.ids):
            if index == 0:
                return Strip([Segment("  no tasks match".ljust(width), Style(dim=True))])
            return Strip.blank(width, base)
        row = self.row_at(index)
        columns = columns_for(self.size.width)
        if row is None:
            text = _format(columns, {"id": str(self.ids[index]), "status": "…"}, width)
        else:
            cells = {
                "id": str(row.id),
                "status": row.status,
                "benchmark": row.benchmark,
                "level": row.level,
                "category": row.category,
                "source": row.source_id,
                "query": row.query,
            }
            text = _format(columns, cells, width)
        return Strip([Segment(text, base + cursor if index == self.cursor else base)])

    # ------------------------------------------------------------------ movement

    def watch_cursor(self, old: int, new: int) -> None:
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        if new < top:
            self.scroll_to(y=new, animate=False, immediate=True)
        elif height and new >= top + height:
            self.scroll_to(y=new - height + 1, animate=False, immediate=True)
        self.refresh()

    def _clamp(self, index: int) -> int:
        return max(0, min(index, len(self.ids) - 1)) if self.ids else 0

    def action_cursor(self, delta: int) -> None:
        self.cursor = self._clamp(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.cursor = self._clamp(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        self.cursor = self._clamp(len(self.ids) - 1 if where < 0 else 0)

    def action_open(self) -> None:
        task_id = self.highlighted_id
        if task_id is not None:
            self.post_message(self.Opened(task_id))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.ids):
            if index == self.cursor and event.chain >= 2:
                self.action_open()
            self.cursor = index
