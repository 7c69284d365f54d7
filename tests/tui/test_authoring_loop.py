"""The annotator's loop (issue 16): my queue from home, Enter in the search opens the first match,
and the editor walks the list it came from (next/previous, "n of N"), saving typing on the way."""

from __future__ import annotations

from textual.widgets import Input

from annotation import tasks as authoring
from annotation.authoring_queue import assign_tasks
from annotation.review.annotators import add_annotator
from store import session_scope
from store.models import Task
from tests.tui.conftest import settle, wait_for_saves
from tests.tui.test_authoring_forms import until
from tui.screens.task_editor import TaskEditorScreen
from tui.screens.task_list import TaskListScreen
from tui.widgets.task_table import TaskTable


def _seed(engine) -> list[int]:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        ids = [int(authoring.create_task(s, "gta", f"Receipt question {i}").id or 0) for i in range(5)]
        add_annotator(s, "tester")
        add_annotator(s, "other")
        assign_tasks(s, "tester", [ids[1], ids[3], ids[4]])
        assign_tasks(s, "other", [ids[0]])
        return ids


async def test_my_queue_then_next_and_previous_with_n_of_n(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    ids = _seed(engine)
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, TaskListScreen))
        await settle(pilot, app)
        table = app.screen.query_one(TaskTable)
        assert table.ids == [ids[1], ids[3], ids[4]]  # mine only
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TaskEditorScreen) and app.screen.detail is not None)
        editor = app.screen
        assert editor.task_id == ids[1] and editor.sub_title.startswith(f"task {ids[1]} · 1 of 3")
        await pilot.press("ctrl+up")  # already the first: stays
        assert app.screen is editor
        box = editor.query_one("#meta-category", Input)
        box.focus()
        await pilot.press(*"tables", "ctrl+down")  # typing right before moving on is kept
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, TaskEditorScreen) and app.screen is not editor and app.screen.detail is not None
            ),
        )
        assert app.screen.task_id == ids[3] and " · 2 of 3" in app.screen.sub_title
        await pilot.press("alt+down")
        await until(pilot, lambda: app.screen.task_id == ids[4] and app.screen.detail is not None)
        assert " · 3 of 3" in app.screen.sub_title
        await pilot.press("alt+up")
        await until(pilot, lambda: app.screen.task_id == ids[3] and app.screen.detail is not None)
        await wait_for_saves(pilot, app)
    with session_scope(engine) as s:
        assert s.get(Task, ids[1]).category == "tables"  # type: ignore[union-attr]


async def test_enter_in_the_search_opens_the_first_match(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    ids = _seed(engine)
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TaskListScreen))
        await settle(pilot, app)
        await pilot.press("slash", *"question 3")
        await until(pilot, lambda: app.screen.query_one(TaskTable).ids == [ids[3]])
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TaskEditorScreen) and app.screen.detail is not None)
        assert app.screen.task_id == ids[3] and " · 1 of 1" in app.screen.sub_title
