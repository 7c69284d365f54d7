"""Data that looks like markup or carries terminal controls, in every name a drop-down lists.

Benchmark, category, level, endpoint and people's names come from datasets and other people. A
``Select`` reads a plain string label as Textual markup: ``[/x]`` raised ``MarkupError`` and took the
whole app down as soon as the task list, the run launcher or the new-task form laid out its options.
"""

from __future__ import annotations

from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from annotation import tasks as authoring
from annotation.review.annotators import add_annotator
from evaluation.harness.endpoints import add_endpoint
from store import session_scope
from tests.tui.conftest import settle
from tui.screens.new_task import NewTaskScreen
from tui.screens.runs.launcher import LaunchScreen
from tui.screens.task_list import TaskListScreen

NAMES = {
    "benchmark": "[/x]bench",
    "category": "[/oops]",
    "level": "[@click=app.quit]click me[/]",
    "annotator": "[/ann] \x1b[2J",
    "endpoint": "[/ep]",
}


def _hostile_project(engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, NAMES["benchmark"], "chainmark")
        authoring.create_task(s, NAMES["benchmark"], "a plain query", category=NAMES["category"], level=NAMES["level"])
        add_annotator(s, NAMES["annotator"])
        add_endpoint(s, NAMES["endpoint"], "http://127.0.0.1:9/v1", "m")
        add_endpoint(s, "plain", "http://127.0.0.1:9/v1", "m")  # two endpoints: none is chosen for you


async def _open_every_select(pilot, app) -> list[str]:  # type: ignore[no-untyped-def]
    """Open each drop-down of the screen as a user would (focus, enter) and read what it lists."""
    shown: list[str] = []
    for select in list(app.screen.query(Select)):
        select.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        overlay = select.query_one(SelectOverlay)
        assert overlay.display, select.id
        shown += [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
        await pilot.press("escape")
        await settle(pilot, app)
    return shown


async def test_markup_in_names_is_listed_as_written(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    _hostile_project(engine)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen())
        await settle(pilot, app)
        shown = " | ".join(await _open_every_select(pilot, app))
        for name in ("benchmark", "category", "level"):
            assert NAMES[name] in shown, name
        assert "[/ann] \\x1b[2J" in shown  # the escape is shown, never sent to the terminal

        app.push_screen(LaunchScreen())
        await settle(pilot, app)
        shown = " | ".join(await _open_every_select(pilot, app))
        assert NAMES["benchmark"] in shown and NAMES["endpoint"] in shown

        app.push_screen(NewTaskScreen())
        await settle(pilot, app)
        assert NAMES["benchmark"] in " | ".join(await _open_every_select(pilot, app))
        assert app.is_running
