"""ctrl+z in a text field takes back its own typing first, then the last saved edit (``LayeredTextArea``,
``tui.undo.TypingSpan``); the editor opens with the query focused, so typing at once is kept."""

from __future__ import annotations

import contextlib

from sqlmodel import select
from textual.widgets import Input, TextArea

from annotation import tasks as authoring
from store import session_scope
from store.models import Task, UndoEntry
from tests.tui.conftest import png, settle, wait_for_saves
from tests.tui.test_authoring_forms import until, until_shown
from tui.screens.confirm import ConfirmDiscardScreen
from tui.screens.task_editor import TaskEditorScreen

QUERY = "What colour is the square?"


def _task(engine, blobs) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(s, "mme", QUERY, answer_spec={"kind": "exact", "value": "white"})
        task_id = int(t.id or 0)
        authoring.attach_asset(s, blobs, task_id, png(300, 300))
        return task_id


def _stored(engine, task_id: int) -> tuple[str, str | None]:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        task = s.get(Task, task_id)
        assert task is not None
        return task.query, task.category


def _undo_rows(engine) -> list[str]:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        return [u.label for u in s.exec(select(UndoEntry).order_by(UndoEntry.id)).all()]  # type: ignore[arg-type]


async def _open(pilot, app) -> TaskEditorScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(app.screen, TaskEditorScreen) and app.screen.detail is not None)
    await pilot.pause()
    return app.screen


async def _category_saved(pilot, app, editor, engine, task_id) -> None:  # type: ignore[no-untyped-def]
    """A saved edit before the typing: what the second ctrl+z must reach."""
    editor.query_one("#meta-category", Input).value = "colour"
    await wait_for_saves(pilot, app)
    assert _stored(engine, task_id) == (QUERY, "colour")


async def _type_now_in_the_query(pilot, app, editor) -> TextArea:  # type: ignore[no-untyped-def]
    """ " now" typed at the end of the query and saved; the query field."""
    query = editor.query_one("#query", TextArea)
    query.focus()
    await pilot.press("end", *" now")
    await wait_for_saves(pilot, app)
    return query


async def test_typing_right_after_opening_a_task_lands_in_the_query(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        assert editor.focused is editor.query_one("#query", TextArea)
        await pilot.press(*" Answer in one word.", "ctrl+q")
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, task_id)[0] == QUERY + " Answer in one word."


async def test_ctrl_z_takes_back_the_typing_then_the_saved_edit_before_it(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        await _category_saved(pilot, app, editor, engine, task_id)
        query = await _type_now_in_the_query(pilot, app, editor)
        assert _stored(engine, task_id) == (QUERY + " now", "colour")
        await pilot.press("ctrl+z")  # the field's own typing
        await wait_for_saves(pilot, app)
        assert query.text == QUERY
        assert _stored(engine, task_id) == (QUERY, "colour")  # the undone text is saved like typing
        assert _undo_rows(engine) == ["edit category"]  # no entry left that would put " now" back
        await pilot.press("ctrl+z")  # nothing of its own left: the edit saved before the typing
        await until(pilot, lambda: _stored(engine, task_id) == (QUERY, None))
        await until(pilot, lambda: editor.query_one("#meta-category", Input).value == "")
        assert _undo_rows(engine) == []
        assert query.text == QUERY


async def test_a_store_undo_that_replaces_the_query_leaves_it_no_history(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        await _category_saved(pilot, app, editor, engine, task_id)
        query = await _type_now_in_the_query(pilot, app, editor)
        editor.query_one("#meta-intent").focus()  # a one-line input: ctrl+z is the store's undo there
        await pilot.press("ctrl+z")
        await until(pilot, lambda: query.text == QUERY)
        await settle(pilot, app)
        assert _stored(engine, task_id) == (QUERY, "colour")
        assert query.history.undo_stack == [] and query.history.redo_stack == []
        query.focus()
        await pilot.press("ctrl+y")  # no redo into the replaced typing
        assert query.text == QUERY
        await pilot.press("ctrl+z")  # no undo of its own either: the next saved edit goes
        await until(pilot, lambda: _stored(engine, task_id) == (QUERY, None))
        await settle(pilot, app)
        assert query.text == QUERY


async def test_quitting_right_after_a_field_undo_stores_the_undone_text(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        await _type_now_in_the_query(pilot, app, editor)
        assert _stored(engine, task_id)[0] == QUERY + " now"
        await pilot.press("ctrl+z", "ctrl+q")
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, task_id)[0] == QUERY
    # and the stored undo stack (what ctrl+z offers after a restart) holds nothing that puts " now" back
    assert _undo_rows(engine) == []


async def test_the_header_says_ctrl_z_takes_back_the_typing_first(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        await _category_saved(pilot, app, editor, engine, task_id)
        await _type_now_in_the_query(
            pilot, app, editor
        )  # saved: the store's entry for it is one the field's undo covers
        assert str(editor.sub_title).endswith("ctrl+z undoes: typing, then edit category")
        editor.query_one("#meta-intent", Input).focus()  # there ctrl+z is the store's undo alone
        await until(pilot, lambda: str(editor.sub_title).endswith("ctrl+z undoes: edit query"))


async def test_an_answer_text_field_undoes_its_own_typing_first_too(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(s, "mme", QUERY, answer_spec={"kind": "references", "references": ["white"]})
        task_id = int(t.id or 0)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        await _category_saved(pilot, app, editor, engine, task_id)
        await until(pilot, lambda: bool(editor.query("#answer-references")))
        field = editor.query_one("#answer-references", TextArea)
        field.focus()
        await pilot.press("end", "enter", *"ivory")
        await wait_for_saves(pilot, app)

        def spec() -> object:
            with session_scope(engine) as s:
                task = s.get(Task, task_id)
                assert task is not None
                return task.answer_spec

        assert spec() == {"kind": "references", "references": ["white", "ivory"]}
        await pilot.press("ctrl+z", "ctrl+z")  # "ivory", then the new line: the field's own batches
        await wait_for_saves(pilot, app)
        assert field.text == "white"
        assert spec() == {"kind": "references", "references": ["white"]}
        assert _undo_rows(engine) == ["edit category"]
        await pilot.press("ctrl+z")
        await until(pilot, lambda: _stored(engine, task_id) == (QUERY, None))


async def test_an_edit_saved_after_a_field_undo_is_still_undone(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Found walking the editor: the field undo deleted the typing's stored entry, SQLite gave the next
    entry (a category edit) the same id, and that edit was then kept off the stack as if taken over too."""
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        editor = await _open(pilot, app)
        query = await _type_now_in_the_query(pilot, app, editor)
        await pilot.press("ctrl+z")
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id) == (QUERY, None) and _undo_rows(engine) == []
        await _category_saved(pilot, app, editor, engine, task_id)
        assert str(editor.sub_title).endswith("ctrl+z undoes: edit category")
        await pilot.press("ctrl+z")  # the query has nothing of its own left: the category edit goes
        await until(pilot, lambda: _stored(engine, task_id) == (QUERY, None))
        assert query.text == QUERY


async def test_keys_typed_while_the_task_loads_land_in_the_query(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Found walking the editor: keys typed in the half second between enter on the list and the query
    getting the focus (the task still loading) were lost."""
    from textual import events

    task_id = _task(engine, blobs)
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = TaskEditorScreen(task_id)
        app.push_screen(editor)
        await until(pilot, lambda: editor.is_attached)
        assert editor.detail is None  # still loading: the keys arrive before the query has its text
        for key in " now":
            app.post_message(events.Key("space" if key == " " else key, key))
        await until(pilot, lambda: editor.detail is not None)
        query = editor.query_one("#query", TextArea)
        await until(pilot, lambda: query.text == QUERY + " now" and editor.focused is query)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, task_id)[0] == QUERY + " now"


async def test_a_character_routed_to_the_screen_just_before_the_query_took_the_focus_is_typed_into_it(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs
) -> None:
    """Found under load: keys typed at once were routed while the focus was nowhere, so to the screen;
    the load then focused the query, and a key reaching the screen after that was dropped (" now"
    saved as " nw"). The screen is handed such keys here the way the app hands them over."""
    from textual import events

    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        query = editor.query_one("#query", TextArea)
        await until(pilot, lambda: editor.focused is query)
        for key in " ok":  # routed to the screen as the app routes a key while nothing has the focus
            editor._forward_event(events.Key("space" if key == " " else key, key))
        await until(pilot, lambda: query.text == QUERY + " ok")
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id)[0] == QUERY + " ok"


def _hold_the_load(monkeypatch):  # type: ignore[no-untyped-def]
    """The editor's task load waits on the returned gate (set it to let the task load)."""
    import threading

    from tui.screens import task_editor

    gate = threading.Event()
    real = task_editor.task_detail

    def slow_detail(session, task_id):  # type: ignore[no-untyped-def]
        gate.wait(30)
        return real(session, task_id)

    monkeypatch.setattr(task_editor, "task_detail", slow_detail)
    return gate


async def polled(condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    """Wait for ``condition`` by polling, not with Pilot's pause: a pause waits for the app to handle a
    callback, which says nothing about the app here (the quit below may be waiting for a load)."""
    import asyncio
    import time

    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition never held"
        await asyncio.sleep(0.005)


async def until_quit_waits(app) -> None:  # type: ignore[no-untyped-def]
    await polled(lambda: app._quit_waiting)


@contextlib.asynccontextmanager
async def _typed_then_quit_while_loading(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, monkeypatch, into_query: bool = False, queued_in_screen: bool = False
):
    """A task editor whose load waits on ``gate``: " now" typed into it and ctrl+q pressed meanwhile.
    ``queued_in_screen``: nothing focused, the keys still in the screen's own queue (where the app forwards
    them) when ctrl+q's action runs, in the same turn. Yields (app, pilot, editor, gate); the gate is
    opened on the way out whatever happened."""
    from textual import events

    gate = _hold_the_load(monkeypatch)
    task_id = _task(engine, blobs)
    app = make_tui()
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            editor = TaskEditorScreen(task_id)
            app.push_screen(editor)
            # the editor takes the keys (attached alone was not enough: on a busy machine the keys went to
            # home below it, where "n" opens a new task, and ctrl+q found nothing typed to wait for)
            await until(pilot, lambda: app.screen is editor and bool(editor.query("#query")))
            if into_query:  # the query field has the focus already: the keys go into it, not to the screen
                editor.query_one("#query", TextArea).focus()
                await until(pilot, lambda: editor.query_one("#query", TextArea).has_focus)
            if queued_in_screen:
                editor.set_focus(None)
                for key in " now":
                    editor.post_message(events.Key("space" if key == " " else key, key))
                await app.action_quit()  # ctrl+q's binding, before the screen has had a turn
            else:
                for key in " now":
                    app.post_message(events.Key("space" if key == " " else key, key))
                app.post_message(events.Key("ctrl+q", None))  # not pilot.press: it would wait for the quit
            yield app, pilot, editor, gate
    finally:
        gate.set()


async def test_quitting_before_the_task_has_loaded_waits_for_it_and_saves_what_was_typed(
    make_tui, engine, blobs, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Found on a busy machine: keys typed right after opening a task and ctrl+q at once, before the task
    had loaded, quit and dropped the keys (they wait for the query's text, which had not arrived). The
    quit now waits for the load: the typing goes into the query, is saved, and the app quits."""
    async with _typed_then_quit_while_loading(make_tui, engine, blobs, monkeypatch) as (app, pilot, editor, gate):
        await until_quit_waits(app)  # the quit waits for the load…
        assert app.is_running and editor.detail is None
        assert not isinstance(app.screen, ConfirmDiscardScreen)  # …without asking
        gate.set()
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, editor.task_id)[0] == QUERY + " now"


async def test_the_app_goes_on_handling_its_messages_while_the_quit_waits_for_the_load(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, monkeypatch
) -> None:
    """The quit used to wait inside the app's message handler: for up to EARLY_TYPING_WAIT_S the app
    handled nothing (keys, a second ctrl+q, repaints queued on it). A callback asked of the app during the
    wait now runs during the wait."""
    async with _typed_then_quit_while_loading(make_tui, engine, blobs, monkeypatch) as (app, pilot, editor, gate):
        await until_quit_waits(app)
        seen: list[bool] = []
        app.call_later(lambda: seen.append(app._quit_waiting))
        await polled(lambda: bool(seen))
        assert seen == [True]  # handled while the quit was still waiting
        gate.set()
        await polled(lambda: not app.is_running)
    assert _stored(engine, editor.task_id)[0] == QUERY + " now"


async def test_keys_typed_into_the_focused_query_before_the_load_are_waited_for_and_saved(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, monkeypatch
) -> None:
    """The flaky form of the test above: when the query field had the focus before the task loaded, the
    keys went into it rather than to the screen, nothing was kept for the load, and ctrl+q quit at once,
    dropping them."""
    args = (make_tui, engine, blobs, monkeypatch)
    async with _typed_then_quit_while_loading(*args, into_query=True) as (app, pilot, editor, gate):
        await until_quit_waits(app)
        gate.set()
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, editor.task_id)[0] == QUERY + " now"


async def test_keys_still_queued_in_an_unfocused_screen_are_waited_for_by_the_quit(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, monkeypatch
) -> None:
    """The flake of the first test above, made certain: with nothing focused, Textual forwards typed keys to
    the screen's own queue, while ctrl+q (a priority binding) is acted on by the app at once. The quit used
    to run before the screen had seen the keys, found nothing typed, and quit or asked without waiting for
    the load."""
    args = (make_tui, engine, blobs, monkeypatch)
    async with _typed_then_quit_while_loading(*args, queued_in_screen=True) as (app, pilot, editor, gate):
        await until_quit_waits(app)
        assert not isinstance(app.screen, ConfirmDiscardScreen)
        gate.set()
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, editor.task_id)[0] == QUERY + " now"


async def test_a_load_slower_than_the_wait_asks_before_quitting(make_tui, engine, blobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A load that does not land in time (a locked database) is not waited for forever: the quit asks,
    and staying lets the task load, the typing goes in and is saved."""
    from tui.screens import task_editor

    monkeypatch.setattr(task_editor, "EARLY_TYPING_WAIT_S", 0.01)
    async with _typed_then_quit_while_loading(make_tui, engine, blobs, monkeypatch) as (app, pilot, editor, gate):
        question = await until_shown(pilot, app, ConfirmDiscardScreen, "#confirm-question")  # not quit silently
        assert "' now' typed into the query while the task is still loading" in str(question.render())
        gate.set()
        await pilot.press("escape")  # stay: the task loads and the typing goes into the query
        query = editor.query_one("#query", TextArea)
        await until(pilot, lambda: query.text == QUERY + " now")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, editor.task_id)[0] == QUERY + " now"
