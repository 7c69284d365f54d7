"""New task (issue 16 item 5): the benchmark is chosen from the existing ones; nothing typed can
create a benchmark by accident, and with none yet the screen says how to make one."""

from __future__ import annotations

from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import Benchmark, Task
from tests.tui.conftest import settle
from tui.screens.new_task import NO_BENCHMARKS, NewTaskScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.selection import chosen


async def test_new_task_picks_an_existing_benchmark_by_keyboard(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.create_benchmark(s, "alpha", "gta", tool_set="gta")
        authoring.create_benchmark(s, "beta", "agentic-mme", tool_set="agentic-mme")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(NewTaskScreen())
        await settle(pilot, app)
        screen = app.screen
        assert app.focused is screen.query_one("#benchmark")
        await pilot.press("enter", "down", "down", "enter")  # open the list, second benchmark
        await settle(pilot, app)
        assert chosen(screen.query_one("#benchmark")) == "beta"
        await pilot.press("tab", *"Which tool zooms?", "ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
    with session_scope(engine) as s:
        task = s.exec(select(Task)).one()
        assert (task.query, s.get(Benchmark, task.benchmark_id).name) == ("Which tool zooms?", "beta")
        assert len(s.exec(select(Benchmark)).all()) == 2


async def test_without_benchmarks_nothing_is_created(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(NewTaskScreen("typo-bench"))
        await settle(pilot, app)
        screen = app.screen
        assert NO_BENCHMARKS in str(screen.query_one("#benchmark-hint").render())
        await pilot.press(*"A query", "ctrl+s")
        await settle(pilot, app)
        assert app.screen is screen
        await pilot.press("escape")  # the typed query is asked about before it is dropped
        await settle(pilot, app)
        assert app.screen is not screen and "query you typed" in str(app.screen.query_one("#confirm-question").render())
    with session_scope(engine) as s:
        assert s.exec(select(Benchmark)).all() == [] and s.exec(select(Task)).all() == []
