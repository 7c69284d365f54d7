"""A colleague's edit arriving live keeps the annotator's cursor (issue 32, "typing lands where it was typed").

The open task editor picks up a save made elsewhere (another terminal: here the store API, as that process
would call it). It used to reload the focused query with the cursor at the start, so the next keys landed
there and autosaved; now the cursor keeps its place relative to the text around it, and typing not saved
yet is never replaced by the arriving value."""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from annotation import tasks as authoring
from store import session_scope
from store.models import Task
from tests.support.must import must
from tests.tui.conftest import settle, wait_for_saves
from tests.tui.test_authoring_forms import until
from tui.kept_cursor import map_offset
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.answer_editor import AnswerEditor

QUERY = "How many cups are on the table?"


@pytest.fixture
def fast_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.screens.task_editor.POLL_SECONDS", 0.1)


def _task(engine, **fields) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        return must(authoring.create_task(s, "mme", QUERY, category="count", **fields).id)


def _elsewhere(engine, task_id: int, **changes) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "bob") as s:  # the colleague's terminal
        authoring.edit_task(s, task_id, **changes)


def _stored(engine, task_id: int) -> Task:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        task = must(s.get(Task, task_id))
        s.expunge(task)
        return task


@pytest.mark.parametrize(
    ("old", "new", "offset", "expected"),
    [
        ("How many cups", "Tell me: How many cups", 9, 18),  # inserted before: shifted along
        ("How many cups", "How many cups?", 9, 9),  # inserted after: stays
        ("How many red cups", "How many cups", 13, 9),  # "red " removed before it
        ("How many red cups", "How many cups", 11, 9),  # inside what was removed: where it was
        ("abc", "abc", 2, 2),
        ("one two three", "ONE two THREE", 5, 5),  # two separate changes around it
        ("", "text", 0, 0),
    ],
)
def test_an_offset_keeps_its_place_in_the_changed_text(old: str, new: str, offset: int, expected: int) -> None:
    assert map_offset(old, new, offset) == expected


async def test_a_live_update_keeps_the_query_cursor_and_typing_lands_there(  # type: ignore[no-untyped-def]
    make_tui, engine, fast_poll
) -> None:
    task_id = _task(engine)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        query = editor.query_one("#query", TextArea)
        assert query.has_focus
        query.move_cursor((0, len("How many ")))
        _elsewhere(engine, task_id, query="Tell me: " + QUERY)
        await until(pilot, lambda: query.text == "Tell me: " + QUERY)
        assert query.cursor_location == (0, len("Tell me: How many "))
        await pilot.press(*"red ")
        await wait_for_saves(pilot, app)
        assert query.text == "Tell me: How many red cups are on the table?"
    assert _stored(engine, task_id).query == "Tell me: How many red cups are on the table?"


async def test_a_live_update_keeps_a_selection(make_tui, engine, fast_poll) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        query = app.screen.query_one("#query", TextArea)
        from textual.widgets.text_area import Selection

        query.selection = Selection((0, 9), (0, 13))  # "cups"
        _elsewhere(engine, task_id, query="So: " + QUERY)
        await until(pilot, lambda: query.text == "So: " + QUERY)
        assert query.selected_text == "cups"
        await pilot.press(*"mugs")
        await wait_for_saves(pilot, app)
    assert _stored(engine, task_id).query == "So: How many mugs are on the table?"


async def test_typing_not_saved_yet_wins_over_a_live_update(make_tui, engine, fast_poll) -> None:  # type: ignore[no-untyped-def]
    """A key handled just before the colleague's value arrives, its save not started yet: the field keeps
    the annotator's text (and saves it against what it started from, so the clash is said, not lost)."""
    task_id = _task(engine)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        query = editor.query_one("#query", TextArea)
        with editor.prevent(TextArea.Changed):  # typed, its Changed not handled yet: no save waiting
            query.insert("!", query.document.end)
        revision = _stored(engine, task_id).revision
        _elsewhere(engine, task_id, domain="Retail")
        await until(pilot, lambda: editor.query_one("#meta-domain", Input).value == "Retail")
        assert _stored(engine, task_id).revision > revision
        assert query.text == QUERY + "!"


async def test_a_live_update_of_the_answer_keeps_its_field_focused_and_the_cursor(  # type: ignore[no-untyped-def]
    make_tui, engine, fast_poll
) -> None:
    task_id = _task(engine, answer_spec={"kind": "exact", "value": "three cups"})
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        value = editor.query_one("#answer-value", Input)
        value.focus()
        await until(pilot, lambda: value.has_focus)  # focusing puts the cursor at the end
        value.cursor_position = len("three")
        _elsewhere(engine, task_id, answer_spec={"kind": "exact", "value": "three cups", "variants": ["3 cups"]})
        await until(pilot, lambda: editor.query_one("#answer-variants", Input).value == "3 cups")
        assert editor.query_one("#answer-value", Input) is value and value.has_focus
        assert value.cursor_position == len("three")
        await pilot.press(*" red")
        await wait_for_saves(pilot, app)
        assert editor.query_one(AnswerEditor).current()[0]["value"] == "three red cups"
    stored = _stored(engine, task_id).answer_spec
    assert stored == {"kind": "exact", "value": "three red cups", "variants": ["3 cups"]}
