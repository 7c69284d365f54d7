"""The toy benchmark plugin in the TUI: its demo benchmark is a choice of the new-task drop-down, a task
created there goes into it, and the chain builder offers the plugin's tool set."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlmodel import select
from textual.widgets import OptionList, Select

from annotation.demo import build_demo
from store import session_scope
from store.models import Benchmark, Task
from tests.support.toy_plugin import write_toy_plugin
from tests.tui.conftest import make_tui, settle  # noqa: F401  (make_tui: a fixture)
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.new_task import NewTaskScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.selection import chosen


async def test_the_toy_benchmark_is_a_choice_of_the_new_task_drop_down(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, tmp_path: Path, installed: Callable[[Path], None]
) -> None:
    installed(write_toy_plugin(tmp_path / "site"))
    with session_scope(engine, "tester") as s:
        report = build_demo(s, blobs)
    assert report.created["demo-toy"] == 2
    app = make_tui()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        app.push_screen(NewTaskScreen())
        await settle(pilot, app)
        screen = app.screen
        await pilot.press("enter")  # open the benchmark list
        await settle(pilot, app)
        listed = screen.query_one("#benchmark", Select).query_one(OptionList)
        labels = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        assert "demo-toy · toy · tools toy" in labels
        for _ in range(labels.index("demo-toy · toy · tools toy") - (listed.highlighted or 0)):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot, app)
        assert chosen(screen.query_one("#benchmark", Select)) == "demo-toy"
        await pilot.press("tab", *"Colour of snow?", "ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
        with session_scope(engine) as s:
            task = s.exec(select(Task).where(Task.query == "Colour of snow?")).one()
            bench = s.get(Benchmark, task.benchmark_id)
            assert bench is not None
            assert (bench.name, bench.description) == ("demo-toy", "Toy questions for trying the plugin")
            assert bench.guidelines == "# Toy guidelines\n\nOne word per answer.\n"
            task_id = task.id
        assert task_id is not None
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        palette = app.screen.query_one("#palette", OptionList)
        assert [palette.get_option_at_index(i).id for i in range(palette.option_count)] == ["Shout"]
