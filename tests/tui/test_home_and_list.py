"""Home and task list: counts by status, filters and the virtual list against real rows."""

from __future__ import annotations

import pytest

from annotation import tasks as authoring
from store import session_scope
from tests.tui.conftest import settle
from tui.data import TaskFilter, task_ids, task_rows
from tui.widgets.task_table import TaskTable
from tui.screens.task_list import TaskListScreen
from textual.widgets import Select
from tests.support.must import must

pytestmark = pytest.mark.renders  # the task table loads its rows as they are drawn


def _seed(engine, n: int = 150) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        for i in range(n):
            t = authoring.create_task(
                s,
                "gta" if i % 3 else "mme",
                f"Query number {i} about cups",
                category="perception" if i % 2 else "logic",
                level=f"L{i % 3 + 1}",
            )
            if i % 10 == 0:
                authoring.set_status(s, must(t.id), "submitted")


def test_filter_queries_match_rows(engine) -> None:  # type: ignore[no-untyped-def]
    _seed(engine)
    with session_scope(engine) as s:
        ids = task_ids(s, TaskFilter(benchmark="mme", level="L1"))
        assert ids == [i + 1 for i in range(150) if i % 3 == 0]  # i%3==0 is mme and level L1
        assert len(task_ids(s, TaskFilter(text="NUMBER 1"))) == 1 + 10 + 50  # 1, 1x, 1xx
        assert len(task_ids(s, TaskFilter(text="100%"))) == 0  # LIKE wildcards are escaped
        page = task_rows(s, TaskFilter(status="submitted"), 0, 5)
        assert [r.id for r in page] == [1, 11, 21, 31, 41]
        assert {r.status for r in page} == {"submitted"}


async def test_home_counts_and_task_list_filter(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    _seed(engine)
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        rows = {r[0]: r for r in (app.screen.query_one("#benchmarks").get_row_at(i) for i in range(2))}
        assert rows["gta"][3:] == [100, 90, 10, 0, 0]
        assert rows["mme"][3:] == [50, 45, 5, 0, 0]
        await pilot.press("t")
        await settle(pilot, app)
        table = app.screen.query_one(TaskTable)
        assert len(table.ids) == 150
        await pilot.press("slash", *"number 14")
        await settle(pilot, app)
        assert table.ids == [15] + list(range(141, 151))
        assert str(app.screen.query_one("#task-count").render()) == "11 matching tasks"
        await pilot.press(*"9")
        await settle(pilot, app)
        assert table.ids == [150] and str(app.screen.query_one("#task-count").render()) == "1 matching task"
        await pilot.press("backspace")
        await settle(pilot, app)
        assert table.ids == [15] + list(range(141, 151))
        await pilot.press("escape", "down", "down")
        assert table.highlighted_id == 142
        # deep rows arrive by page: jump to the end of the full list
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        await pilot.press("end")
        await settle(pilot, app)
        assert table.highlighted_id == 150
        assert table.row_at(149) is not None and table.row_at(149).query == "Query number 149 about cups"


async def test_list_height_and_scrollbar_follow_the_filter(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """A new count that keeps the scrollbar skips the screen layout; one that hides or shows it
    does not: either way the scrollbar and the scroll range match the rows."""
    _seed(engine)
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await pilot.press("t")
        await settle(pilot, app)
        table = app.screen.query_one(TaskTable)
        window = table.scrollable_content_region.height

        def shown() -> tuple[int, bool, int, int]:
            return (
                table.virtual_size.height,
                table.show_vertical_scrollbar,
                table.vertical_scrollbar.window_virtual_size,
                table.max_scroll_y,
            )

        assert shown() == (150, True, 150, 150 - window)
        await pilot.press("slash", *"number 1")  # 61 rows: the scrollbar stays
        await settle(pilot, app)
        assert shown() == (61, True, 61, 61 - window)
        await pilot.press(*"4")  # 11 rows fit: the scrollbar goes
        await settle(pilot, app)
        assert shown()[:2] == (11, False) and table.max_scroll_y == 0
        await pilot.press("backspace", "backspace")  # "number " matches all 150 again
        await settle(pilot, app)
        assert shown() == (150, True, 150, 150 - window)
        await pilot.press("escape", "end")
        await settle(pilot, app)
        assert table.scroll_offset.y == 150 - window and table.highlighted_id == 150


async def test_startup_heap_is_frozen_once_home_has_its_data_until_the_app_ends(make_tui, engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import gc

    calls = []
    real_freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append(1), real_freeze()))
    _seed(engine, n=5)
    assert gc.get_freeze_count() == 0
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        assert app.screen.query_one("#benchmarks").row_count == 2
        assert len(calls) == 1 and gc.get_freeze_count() > 0
        await pilot.press("r")  # home reloads: no second freeze
        await settle(pilot, app)
        assert len(calls) == 1
    assert gc.get_freeze_count() == 0  # handed back when the app ended (a test process opens many)
    calls.clear()
    monkeypatch.setenv("CHAINMARK_PLAIN", "heap_freeze")  # the switch: the collector walks everything
    async with make_tui().run_test(size=(120, 36)) as pilot:
        await settle(pilot, pilot.app)
        assert calls == [] and gc.get_freeze_count() == 0


async def test_task_list_refreshes_on_return_from_the_editor(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """Issue 16 item 8: back from the editor, the list showed the rows as they were before the edit."""
    from tui.screens.task_editor import TaskEditorScreen

    _seed(engine, 5)
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await pilot.press("t")
        await settle(pilot, app)
        await _until(pilot, lambda: app.screen._index is not None)  # the full id index arrived too
        table = app.screen.query_one(TaskTable)
        assert table.row_at(0).query == "Query number 0 about cups"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
        with session_scope(engine, "tester") as s:
            authoring.edit_task(s, 1, query="Edited while the list was covered")
        await pilot.press("escape")
        await settle(pilot, app)
        await _until(pilot, lambda: table.row_at(0).query == "Edited while the list was covered")


async def _until(pilot, condition, tries: int = 200) -> None:  # type: ignore[no-untyped-def]
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    assert condition()


async def test_rows_load_when_the_id_index_arrives_before_the_first_page(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """Under load the full id index can land before the first page: the rows must still fill in
    (they stayed "…" for good, because an empty first page counted as loaded)."""
    from tui.screens.task_list import IndexLoaded, TaskListScreen

    _seed(engine, 30)
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        screen = TaskListScreen("mme")
        screen.reload = lambda: None  # type: ignore[method-assign]  # the test delivers the answers itself
        await app.push_screen(screen)
        await settle(pilot, app)
        with session_scope(engine) as s:
            ids = task_ids(s, screen.filter)
        screen.post_message(IndexLoaded(screen.filter, ids))  # the index first, no first page yet
        await settle(pilot, app)
        table = screen.query_one(TaskTable)
        assert table.ids == ids
        first = table.row_at(0)
        assert first is not None and first.id == ids[0]


async def test_a_long_chosen_value_stays_on_one_line(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """The task list's filters are 18 cells wide: a longer benchmark name wrapped and lost its end."""
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "a-rather-long-benchmark-name", "chainmark")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen("a-rather-long-benchmark-name"))
        await settle(pilot, app)
        label = app.screen.query_one("#benchmark", Select).query_one("#label")
        assert label.region.height == 1
        assert str(label.render_line(0).text).rstrip().endswith("…")


async def test_every_filter_is_usable_at_80_columns(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """At 80×24 one row of filters left the search box 4 cells wide and pushed 'assignee' off screen."""
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen())
        await settle(pilot, app)
        screen = app.screen
        assert screen.query_one("#text").region.width >= 20
        for widget in screen.query("#filters > *"):
            assert screen.region.contains_region(widget.region), widget.id


def _screen_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The screen's text, one string per row (a wide character is one character of it, two cells)."""
    update = app.screen._compositor.render_full_update()
    lines = []
    for row in update.strips:
        for strip in row:
            lines.append("".join(seg.text for seg in strip if not seg.control))
    return lines


async def test_an_80_column_list_shows_the_query_and_keeps_wide_characters_in_their_columns(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """Walk at 80x24: the query column was ten characters wide ("Three frie…"), too little to tell tasks
    apart; and a category with an emoji (two cells, counted as one) pushed the rest of its row right."""
    from rich.cells import cell_len

    query = "Three friends shared this breakfast and split the bill evenly"
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        authoring.create_task(s, "gta", query, category="perception", level="L1")
        authoring.create_task(s, "gta", "Which cake won?", category="蛋糕🎉🎉", level="L2")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen())
        await settle(pilot, app)
        table = app.screen.query_one(TaskTable)
        assert table.ids == [1, 2]
        lines = _screen_lines(app)
        header = next(line for line in lines if line.startswith("id "))
        first = next(line for line in lines if line.startswith("1 "))
        second = next(line for line in lines if line.startswith("2 "))
        assert query[:30] in first, first
        at = cell_len(header[: header.index("query")])  # in cells: a wide character is one string index
        assert cell_len(first[: first.index("Three")]) == cell_len(second[: second.index("Which")]) == at
        assert cell_len(second) == cell_len(first) == 80


def test_the_count_line_says_task_once_and_matching_under_a_filter() -> None:
    """The first page's count (shown before the full count arrives) said "1 tasks" and no "matching":
    both count lines now say it one way."""
    from tui.screens.task_list import _count_text

    assert _count_text(1, TaskFilter()) == "1 task"
    assert _count_text(1234, TaskFilter()) == "1,234 tasks"
    assert _count_text(1, TaskFilter(text="cups")) == "1 matching task"
    assert _count_text(3, TaskFilter(status="draft")) == "3 matching tasks"


async def test_home_says_why_its_data_could_not_be_read_and_reads_again_on_r(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A database path that names a folder: the failure notice faded after 8 s and the benchmarks table went
    on showing its loading spinner for ever. The reason stays above the table (in the CLI's words), and r
    reads again once the path is a database."""
    from textual.widgets import DataTable, Static
    from textual_image.widget import HalfcellImage

    from store import make_engine
    from store.migrate import upgrade
    from tests.tui.conftest import until
    from tui.app import make_app
    from tui.context import AppContext

    place = tmp_path / "chainmark.db"
    place.mkdir()  # a folder where the database should be
    app = make_app(AppContext(db=str(place), actor="tester"), image_widget=HalfcellImage)
    async with app.run_test(size=(120, 30)) as pilot:
        title = app.screen.query_one("#benchmarks-title", Static)
        await until(pilot, lambda: "could not be read" in str(title.render()))
        assert "the database file cannot be opened" in str(title.render())
        assert not app.screen.query_one("#benchmarks", DataTable).loading
        place.rmdir()
        engine = make_engine(place)
        upgrade(engine)
        engine.dispose()
        await pilot.press("r")
        await until(pilot, lambda: str(title.render()) == "Benchmarks")
        await settle(pilot, app)
