"""Two TUIs on one task (issue 16 item 3, optimistic concurrency): an open editor picks up changes
made elsewhere; edits to different fields merge; an edit to a field someone else changed meanwhile
is never silently overwritten: the annotator sees who changed what and reloads or overwrites."""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from annotation import tasks as authoring
from store import session_scope
from store.models import Task
from tests.tui.conftest import png, settle, wait_for_saves
from tests.tui.test_authoring_forms import until, until_shown
from tui.screens.conflict import ConflictScreen
from tui.screens.task_editor import TaskEditorScreen
from tests.support.must import must


@pytest.fixture
def fast_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.screens.task_editor.POLL_SECONDS", 0.1)


def _task(engine, blobs) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(s, "mme", "How many?", category="count", level="1")
        authoring.attach_asset(s, blobs, must(t.id), png())
        return t.id


def _elsewhere(engine, task_id: int, **changes) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "bob") as s:  # the other terminal
        authoring.edit_task(s, task_id, **changes)


def _stored(engine, task_id: int) -> Task:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        task = s.get(Task, task_id)
        s.expunge(task)
        return task


async def test_open_editor_shows_changes_made_elsewhere(make_tui, engine, blobs, fast_poll) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        _elsewhere(engine, task_id, domain="Retail", query="How many cups?")
        await until(pilot, lambda: editor.query_one("#meta-domain", Input).value == "Retail")
        assert editor.query_one("#query").text == "How many cups?"
        # an edit to another field merges with theirs, typed as an annotator types it: into the focused
        # field (a value set without the focus could be replaced by the next poll's load before its Changed
        # message was handled: the live update keeps only focused or pending fields as they are)
        category = editor.query_one("#meta-category", Input)
        category.focus()
        await until(pilot, lambda: category.has_focus)
        await pilot.press("end", *"ing")
        await wait_for_saves(pilot, app)
        assert not isinstance(app.screen, ConflictScreen)
    task = _stored(engine, task_id)
    assert (task.domain, task.query, task.category) == ("Retail", "How many cups?", "counting")


async def test_edits_made_while_a_live_update_is_being_shown_are_saved(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, fast_poll, monkeypatch
) -> None:
    """The editor ignored every change while a load was being shown (until the screen's next refresh), not
    only the load's own echo: keys handled in that moment were never saved, and the flaky test above lost
    its category this way. Here the moment is held open (the end of the load waits for the test), so the
    typing lands in it every time."""
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        done_loading, held = editor._done_loading, []
        monkeypatch.setattr(editor, "_done_loading", lambda: held.append(True))
        _elsewhere(engine, task_id, domain="Retail")
        await until(pilot, lambda: editor.query_one("#meta-domain", Input).value == "Retail")
        assert editor._loading  # the live update is still being shown
        await pilot.press("end", *" Count them.")  # the query has the focus
        editor.query_one("#meta-category", Input).value = "counting"
        await until(pilot, lambda: {"query", "meta-category"} <= set(editor._pending_saves), timeout=5)
        monkeypatch.setattr(editor, "_done_loading", done_loading)
        done_loading()
        await wait_for_saves(pilot, app)
    task = _stored(engine, task_id)
    assert (task.domain, task.query, task.category) == ("Retail", "How many? Count them.", "counting")


async def test_open_editor_follows_every_save_of_another_editing_session(make_tui, engine, blobs, fast_poll) -> None:  # type: ignore[no-untyped-def]
    """Bob's saves within one editing session keep one revision; the open editor still shows each of
    them (it compares the time of the last save, not only the revision number)."""
    task_id = _task(engine, blobs)

    def bob_types(**changes) -> None:  # type: ignore[no-untyped-def]
        with session_scope(engine, "bob") as s:
            s.info["edit_session"] = "bob-visit"
            authoring.edit_task(s, task_id, **changes)

    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        bob_types(domain="Retail")
        await until(pilot, lambda: editor.query_one("#meta-domain", Input).value == "Retail")
        revision = _stored(engine, task_id).revision
        bob_types(domain="Retail and cafes")  # the same visit of Bob's: no new revision
        assert _stored(engine, task_id).revision == revision
        await until(pilot, lambda: editor.query_one("#meta-domain", Input).value == "Retail and cafes")


@pytest.mark.parametrize("choice", ["o", "r"])
async def test_same_field_conflict_asks_and_never_overwrites_silently(make_tui, engine, blobs, choice) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        box = editor.query_one("#meta-level", Input)
        box.focus()
        await pilot.press("end", "backspace", *"hard")
        _elsewhere(engine, task_id, level="easy")  # lands before this editor saves its typing
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).level == "easy"  # not overwritten behind bob's back
        message = str((await until_shown(pilot, app, ConflictScreen, "#conflict-message")).render())
        assert "level was changed by bob" in message and "'easy'" in message and "'hard'" in message
        await pilot.press(choice)
        await wait_for_saves(pilot, app)
        if choice == "o":
            assert _stored(engine, task_id).level == "hard"
        else:
            await until(pilot, lambda: box.value == "easy")
            assert _stored(engine, task_id).level == "easy"


async def test_checkpoint_edited_elsewhere_is_not_overwritten_silently(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.checkpoint_editor import CheckpointEditorScreen

    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        cp_id = authoring.add_checkpoint(s, task_id, "cp1", axis="S", description="mine").id
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        ed = app.screen
        cps = ed.query_one("#checkpoint-list")
        cps.focus()
        cps.highlighted = 0
        await pilot.press("enter")
        await settle(pilot, app)
        with session_scope(engine, "bob") as s:
            authoring.edit_checkpoint(s, must(cp_id), description="bob's")
        ed.query_one("#cp-description").value = "my edit"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        with session_scope(engine) as s:
            from store.models import Checkpoint

            assert must(s.get(Checkpoint, cp_id)).description == "bob's"
        assert ed.query_one("#cp-description").value == "my edit"  # the form is kept
        await pilot.press("ctrl+s")  # on purpose, a second time: overwrite
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert must(s.get(Checkpoint, cp_id)).description == "my edit"
        # and a further edit of my own saves without any fuss
        cps.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        ed.query_one("#cp-description").value = "my second edit"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert must(s.get(Checkpoint, cp_id)).description == "my second edit"


QUERY = "Count the cups.\nUse the receipt.\nAnswer with a number."


async def _conflict_on_query(pilot, app, engine, task_id: int, mine: str, theirs: str):  # type: ignore[no-untyped-def]
    editor = app.screen
    assert isinstance(editor, TaskEditorScreen)
    editor.query_one("#query", TextArea).text = mine  # as typed: the save waits for a pause in typing
    _elsewhere(engine, task_id, query=theirs)  # lands before this editor's save
    await wait_for_saves(pilot, app)
    await until(pilot, lambda: isinstance(app.screen, ConflictScreen))
    return editor


MERGED = "Count the red cups.\nUse the receipt.\nAnswer with an integer."


async def _merge_of_both_edits(pilot, app, engine, task_id: int):  # type: ignore[no-untyped-def]
    """Mine changes the first line, theirs the last; ``m`` on the conflict: (the editor, the merge's help)."""
    from tui.screens.merge import MergeScreen

    editor = await _conflict_on_query(
        pilot, app, engine, task_id, QUERY.replace("cups", "red cups"), QUERY.replace("a number", "an integer")
    )
    await pilot.press("m")
    return editor, await until_shown(pilot, app, MergeScreen, "#merge-help")


async def test_merge_of_a_field_both_edited_keeps_both_changes(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    _elsewhere(engine, task_id, query=QUERY)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor, merge_help = await _merge_of_both_edits(pilot, app, engine, task_id)
        assert "merged cleanly" in str(merge_help.render())
        await pilot.press("ctrl+s")
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).query == MERGED
        await until(pilot, lambda: editor.query_one("#query").text == MERGED)


async def test_a_forced_load_that_arrives_while_the_merge_is_saved_does_not_keep_the_merge_hidden(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, monkeypatch
) -> None:
    """Under two CPU burners the merged text was stored but the form kept showing the annotator's own
    version: a live update, forced because of the merge, arrived while the merge's save was on its way,
    kept the field as typed (right) and yet counted the request to show everything as met (wrong), so
    the load after the save treated the form's text as typing. Here the save is held open until that
    load has been shown."""
    import threading

    from tui.screens import task_editor

    task_id = _task(engine, blobs)
    _elsewhere(engine, task_id, query=QUERY)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor, _ = await _merge_of_both_edits(pilot, app, engine, task_id)
        release, real_edit_fields = threading.Event(), task_editor.edit_fields

        def held_edit_fields(*args, **kwargs):  # type: ignore[no-untyped-def]
            write = real_edit_fields(*args, **kwargs)
            return lambda session: release.wait(30) and write(session)

        monkeypatch.setattr(task_editor, "edit_fields", held_edit_fields)
        await pilot.press("ctrl+s")
        saving = lambda: [w for w in app.workers if w.group == "save" and not w.is_finished]  # noqa: E731
        await until(pilot, lambda: app.screen is editor and bool(saving()))
        shown = editor.detail
        editor.refresh_data()  # a live update while the merge is being saved
        await until(pilot, lambda: editor.detail is not shown)
        release.set()
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).query == MERGED
        await until(pilot, lambda: editor.query_one("#query").text == MERGED)


async def test_a_merge_with_markers_left_is_not_saved_and_escape_goes_back_to_the_choice(
    make_tui, engine, blobs
) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.merge import MergeScreen

    task_id = _task(engine, blobs)
    _elsewhere(engine, task_id, query=QUERY)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        theirs = QUERY.replace("cups", "blue cups")
        await _conflict_on_query(pilot, app, engine, task_id, QUERY.replace("cups", "red cups"), theirs)
        await pilot.press("m")
        text = (await until_shown(pilot, app, MergeScreen, "#merge-text")).text
        merge = app.screen
        assert "<<<<<<< yours\nCount the red cups.\n=======\nCount the blue cups.\n>>>>>>> bob's" in text
        await pilot.press("ctrl+s")  # markers still there: refused, the text stays
        await pilot.pause()
        assert "conflict markers left on lines 1, 3, 5" in str(merge.query_one("#merge-error").render())
        assert app.screen is merge and _stored(engine, task_id).query == theirs
        await pilot.press("escape")  # back to the choice, nothing saved
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("m")
        area = await until_shown(pilot, app, MergeScreen, "#merge-text")
        area.text = "Count the red and blue cups.\nUse the receipt.\nAnswer with a number."
        await pilot.press("ctrl+s")
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).query == "Count the red and blue cups.\nUse the receipt.\nAnswer with a number."


async def test_an_answer_spec_both_edited_merges_key_by_key(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.merge import MergeScreen

    task_id = _task(engine, blobs)
    base = {"kind": "exact", "value": "3"}
    _elsewhere(engine, task_id, answer_spec=base)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        _elsewhere(engine, task_id, answer_spec={"kind": "exact", "value": "3", "variants": ["three"]})
        editor._save_fields("answer", {"answer_spec": {"kind": "exact", "value": "4"}}, "edit answer")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MergeScreen))
        await pilot.press("ctrl+s")
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).answer_spec == {"kind": "exact", "value": "4", "variants": ["three"]}


async def test_quit_right_after_typing_into_a_field_changed_elsewhere_keeps_the_typing(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Two windows on one task, both typing into the query, both quitting at once (found walking it in
    tmux): the second save is refused as a conflict, and quitting went ahead and dropped that typing.
    Now the quit asks, and the typing is still in the form to settle."""
    from tui.screens.confirm import ConfirmDiscardScreen

    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        editor.query_one("#query").focus()
        await pilot.press("end", *" ANN")
        _elsewhere(engine, task_id, query="How many? BOB")  # bob's save lands first
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, (ConfirmDiscardScreen, ConflictScreen)))
        assert app.is_running
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).query == "How many? BOB"  # bob's text, not overwritten
        shown = editor.query_one("#query", TextArea).text
        assert shown == "How many? ANN", shown  # and ann's still there
        assert any("your edit of query (bob changed it" in w for w in editor.unsaved_changes())


@pytest.mark.parametrize("field", ["query", "meta-category"])
async def test_undo_never_drops_an_edit_someone_made_after_mine(make_tui, engine, blobs, fast_poll, field) -> None:  # type: ignore[no-untyped-def]
    """Walk: Bob typed into the query, Alice then saved a merge of both; Bob's ctrl+z put the query back
    to what it was before his typing and Alice's merge was gone, without a word. The undo is refused."""
    task_id = _task(engine, blobs)
    column = field.removeprefix("meta-")
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        widget = editor.query_one(f"#{field}")
        widget.focus()
        await pilot.press("end", *" mine")
        await wait_for_saves(pilot, app)
        await until(pilot, lambda: str(getattr(_stored(engine, task_id), column)).endswith(" mine"))
        editor.query_one("#history").focus()  # away from the field (a focused box keeps its text); ctrl+z
        # there takes back the saved edit, not the field's own typing
        _elsewhere(engine, task_id, **{column: "theirs, after mine"})
        shown = (lambda: widget.text) if field == "query" else (lambda: widget.value)
        await until(pilot, lambda: shown() == "theirs, after mine")
        await pilot.press("ctrl+z")
        await wait_for_saves(pilot, app)
        await settle(pilot, app)
        assert getattr(_stored(engine, task_id), column) == "theirs, after mine"
        messages = [str(n.message) for n in app._notifications]
        assert any(f"not undone: {column} was changed by bob" in m for m in messages), messages
        assert not any(m.startswith("undid in") for m in messages), messages
