"""ctrl+z works after the TUI was closed and opened again: each person's undo stack per task is stored
with the edits (``tui.undo``), by operation name, never as code."""

from __future__ import annotations

import json

from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import ReferenceStep, Task, UndoEntry
from tests.tui.conftest import png, settle, wait_for_saves
from tui.context import AppContext
from tui.screens.task_editor import TaskEditorScreen
from tui.undo import Edit, record, stored_stack


def _task(engine, blobs) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        t = authoring.create_task(s, "gta", "How many cups?", answer_spec={"kind": "exact", "value": "3"})
        authoring.attach_asset(s, blobs, int(t.id or 0), png())
        return int(t.id or 0)


async def test_an_edit_is_undone_after_a_restart(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(140, 48)) as pilot:
        await settle(pilot, app)
        app.screen.query_one("#meta-category").value = "counting"
        await wait_for_saves(pilot, app)
        await pilot.press("ctrl+q")
    with session_scope(engine) as s:
        assert getattr(s.get(Task, task_id), "category", None) == "counting"
        assert [(u.actor, u.scope, u.op) for u in s.exec(select(UndoEntry)).all()] == [
            ("tester", f"task {task_id}", "edit_task")
        ]

    again = make_tui(start_task=task_id)  # a new session of the same person
    async with again.run_test(size=(140, 48)) as pilot:
        await settle(pilot, again)
        editor = again.screen
        assert isinstance(editor, TaskEditorScreen)
        assert "ctrl+z undoes: " in str(editor.sub_title) and "category" in str(editor.sub_title)
        await pilot.press("ctrl+z")
        await settle(pilot, again)
    with session_scope(engine) as s:
        assert getattr(s.get(Task, task_id), "category", "missing") is None
        assert s.exec(select(UndoEntry)).all() == []  # undone: gone from the stored stack too


async def test_another_person_does_not_get_my_undo_stack(engine, blobs, db_path) -> None:  # type: ignore[no-untyped-def]
    from textual_image.widget import HalfcellImage

    from tui.app import make_app

    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        record(s, f"task {task_id}", Edit("category", "edit_task", {"task_id": task_id, "fields": {"category": None}}))
    other = make_app(
        AppContext(db=str(db_path), actor="someone-else"), image_widget=HalfcellImage, engine=engine, start_task=task_id
    )
    async with other.run_test(size=(140, 48)) as pilot:
        await settle(pilot, other)
        assert "ctrl+z undoes" not in str(other.screen.sub_title)
        assert other.undo_stack_for(f"task {task_id}") == []


def test_a_deleted_step_comes_back_whole_from_the_stored_stack(engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """The stored arguments are plain JSON: a step delete's snapshot survives the round trip."""
    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        step = authoring.add_step(
            s,
            task_id,
            thought="read it",
            tool_name="OCR",
            tool_args={"image": "a.png"},
            result_text="3 cups",
            result={"data": {"text": "3 cups"}},
        )
        step_id = int(step.id or 0)
    with session_scope(engine, "tester") as s:
        snapshot = authoring.delete_step(s, step_id)
        record(s, f"task {task_id}", Edit("delete step 1", "restore_step", {"snapshot": snapshot}))
    with session_scope(engine, "tester") as s:
        (edit,) = stored_stack(s, f"task {task_id}")
        assert json.loads(json.dumps(edit.args)) == edit.args
        edit.undo(s)
    with session_scope(engine, "tester") as s:
        (back,) = s.exec(select(ReferenceStep).where(ReferenceStep.task_id == task_id)).all()
        assert (back.thought, back.tool_name, back.result_text, back.result) == (
            "read it",
            "OCR",
            "3 cups",
            {"data": {"text": "3 cups"}},
        )
        assert s.exec(select(UndoEntry)).all() == []


async def test_revert_to_here_from_the_history_table(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Enter on a history entry asks, then takes the task back to just after that change."""
    from textual.widgets import DataTable

    from tui.screens.confirm import ConfirmDiscardScreen

    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        authoring.edit_task(s, task_id, query="How many mugs?")
        authoring.edit_task(s, task_id, query="How many plates?")
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(140, 48)) as pilot:
        await settle(pilot, app)
        history = app.screen.query_one("#history", DataTable)
        keys = [k.value for k in history.rows]
        assert len(keys) >= 3  # newest first: plates, mugs, created…
        history.focus()
        history.move_cursor(row=1)  # the "mugs" edit
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen)
        await pilot.press("d")
        await settle(pilot, app)
    with session_scope(engine) as s:
        assert getattr(s.get(Task, task_id), "query", None) == "How many mugs?"


async def test_the_undo_hint_alone_has_no_dangling_separator(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """A screen with no sub-title of its own showed "chainmark —  · ctrl+z undoes: …"."""
    from tui.screens.home import HomeScreen
    from tui.undo import OPS, Edit

    app = make_tui()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, HomeScreen) and not app.screen.sub_title
        app.push_undo(Edit("rating #4 of trajectory:1", next(iter(OPS))))
        await settle(pilot, app)
        app.screen.show_undo_hint()  # again: the hint is replaced, never stacked
        assert app.screen.sub_title == "ctrl+z undoes: rating #4 of trajectory:1"


def test_undoing_a_task_creation_is_refused_once_the_task_was_worked_on(engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Walk: new task, attach an image, add a step, back home, ctrl+z ("undoes: create task 15"): the undo
    failed with "raised as a result of Query-invoked autoflush; consider using a session.no_autoflush
    block". A task nobody built on is still deleted."""
    import pytest

    from annotation.tasks import AuthoringError

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        fresh = int(authoring.create_task(s, "mme", "fresh?").id or 0)
        worked = int(authoring.create_task(s, "mme", "worked on?").id or 0)
        authoring.attach_asset(s, blobs, worked, png())
        authoring.add_step(s, worked, tool_name="crop", tool_args={"image_index": 0}, result_text="saw")
    with session_scope(engine, "tester") as s:
        with pytest.raises(AuthoringError, match=f"not undone: task {worked} has been worked on"):
            Edit(f"create task {worked}", "delete_task", {"task_id": worked}).undo(s)
    with session_scope(engine, "tester") as s:
        Edit(f"create task {fresh}", "delete_task", {"task_id": fresh}).undo(s)
    with session_scope(engine) as s:
        assert s.get(Task, fresh) is None and s.get(Task, worked) is not None
