"""Nothing typed is lost (issue 16 item 3): pending saves are flushed on quit, on screen change and
before an undo; leaving with something unsavable asks first; a crash leaves its traceback in a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation import tasks as authoring
from store import session_scope
from store.models import ReferenceStep, Task
from tests.tui.conftest import png, settle, wait_for_saves
from tests.tui.test_authoring_forms import until
from tui.app import exit_status
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.confirm import ConfirmDiscardScreen
from tui.screens.help import HelpScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.arg_form import ArgForm
from tests.support.must import must


def _task(engine, blobs) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(
            s, "mme", "What colour is the square?", answer_spec={"kind": "exact", "value": "white"}
        )
        authoring.attach_asset(s, blobs, must(t.id), png(300, 300))
        return t.id


@pytest.fixture
def slow_debounce(monkeypatch: pytest.MonkeyPatch) -> None:
    """A typing pause far longer than any test: only a flush can have saved what was typed."""
    monkeypatch.setattr("tui.screens.task_editor.TEXT_DEBOUNCE", 60.0)


def _task_updates(engine, task_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many writes changed the task row (its audit trail): each save and each undo adds one."""
    from sqlmodel import func, select

    from store.models import AuditEvent

    with session_scope(engine) as s:
        return s.exec(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.entity == "task", AuditEvent.entity_id == task_id, AuditEvent.action == "update")
        ).one()


def _stored(engine, task_id: int) -> Task:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        task = s.get(Task, task_id)
        s.expunge(task)
        return task


async def test_quit_right_after_typing_saves_the_typing(make_tui, engine, blobs, slow_debounce) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
        app.screen.query_one("#meta-category").focus()
        await pilot.press(*"colour")
        app.screen.query_one("#query").focus()
        await pilot.press("end", *" Answer in one word.")
        assert app.screen._pending_saves  # still waiting on the typing pause
        await pilot.press("ctrl+q")  # long before the 0.6 s pause is over
        await until(pilot, lambda: not app.is_running)
    assert exit_status(app) == 0  # a clean quit
    task = _stored(engine, task_id)
    assert task.category == "colour"
    assert task.query == "What colour is the square? Answer in one word."


async def test_keys_typed_faster_than_the_field_handles_them_are_saved_on_quit(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Keys that arrive in one burst (a fast typist, a paste, a slow machine) sit in the field's queue
    while the app reads the next ones; ctrl+q once jumped that queue (a priority binding) and quit with
    the field's value from before the burst. Found walking the editor in tmux: "counting" typed and
    quit at once was stored as an empty category."""
    from textual import events

    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        box = app.screen.query_one("#meta-category")
        box.focus()
        await pilot.pause()
        for key in [*"counting", "ctrl+q"]:  # posted together, as a terminal delivers a burst
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, task_id).category == "counting"


async def test_screen_change_and_undo_flush_pending_typing(make_tui, engine, blobs, slow_debounce) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        editor.query_one("#meta-level").focus()
        await pilot.press(*"easy")
        app.push_screen(HelpScreen(editor))  # any screen on top saves the typing at once
        await until(pilot, lambda: not editor._pending_saves)
        await wait_for_saves(pilot, app)
        assert _stored(engine, task_id).level == "easy"
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is editor
        # ctrl+z right after typing takes back that typing (it once undid an older edit instead,
        # and the typing was saved afterwards anyway)
        editor.query_one("#meta-intent").focus()
        await pilot.press(*"count")
        assert editor._pending_saves
        updates = _task_updates(engine, task_id)
        revision = _stored(engine, task_id).revision
        await pilot.press("ctrl+z")
        # the undo action awaits the flushed save before it starts its own: wait for both to land
        await until(pilot, lambda: _task_updates(engine, task_id) >= updates + 2)
        assert _stored(engine, task_id).revision == revision  # one editor visit, one revision
        await wait_for_saves(pilot, app)
        task = _stored(engine, task_id)
        assert (task.intent, task.level) == (None, "easy")
        # the field shows the restored value once the editor has reloaded (a worker: wait for it)
        await until(pilot, lambda: editor.query_one("#meta-intent").value == "")


async def test_leaving_an_invalid_answer_spec_asks_first(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task_id))
        await settle(pilot, app)
        editor = app.screen
        editor.query_one("#answer-kind").value = "numeric"
        await settle(pilot, app)
        editor.query_one("#answer-value").value = "about forty"
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen)
        assert "answer spec is invalid" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("escape")  # stay: the half-made spec is still there to fix
        await settle(pilot, app)
        assert app.screen is editor and editor.query_one("#answer-value").value == "about forty"
        # quitting asks too; ctrl+q on the question quits
        await pilot.press("ctrl+q")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen) and app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running)
    assert _stored(engine, task_id).answer_spec == {"kind": "exact", "value": "white"}


async def test_leaving_an_unaccepted_run_asks_first(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        builder = app.screen
        builder.query_one(ArgForm).set_value("bbox_2d", [0, 0, 500, 500])
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert builder.pending is not None and builder.pending["result"].ok
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen)
        await pilot.press("escape")
        await settle(pilot, app)
        await pilot.press("ctrl+s")  # accept it after all
        await settle(pilot, app)
        await pilot.press("escape")  # nothing left unsaved: leaves without asking
        await settle(pilot, app)
        assert not isinstance(app.screen, (ConfirmDiscardScreen, ChainBuilderScreen))
    with session_scope(engine) as s:
        from sqlmodel import select

        assert [st.tool_name for st in s.exec(select(ReferenceStep)).all()] == ["crop"]


async def test_a_crash_is_logged_next_to_the_database(make_tui, engine, blobs, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()

    def boom() -> None:
        raise RuntimeError("synthetic crash for the log")

    with pytest.raises(RuntimeError, match="synthetic crash"):
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            app.call_later(boom)
            await pilot.pause()
            await pilot.pause()
    log = db_path.with_name("chainmark-crash.log")
    assert app.crash_log == log
    assert exit_status(app) == 1  # the process says it failed (it exited 0)
    text = log.read_text()
    assert "RuntimeError: synthetic crash for the log" in text and "screens: " in text and "HomeScreen" in text


async def test_a_form_saved_right_after_typing_saves_every_key(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """ctrl+s on the checkpoint form is a priority binding; it waits for the keys typed before it (as
    ctrl+q does) instead of saving the form without its last characters."""
    from textual import events
    from textual.widgets import Input

    from tui.screens.checkpoint_editor import CheckpointEditorScreen

    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        cp_id = int(authoring.add_checkpoint(s, task_id, "cp1", axis="S", description="old").id or 0)
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        editor = app.screen
        cps = editor.query_one("#checkpoint-list")
        cps.focus()
        cps.highlighted = 0
        await pilot.press("enter")
        await settle(pilot, app)
        box = editor.query_one("#cp-description", Input)
        box.value = ""
        box.focus()
        await pilot.pause()
        for key in [*"crop the receipt", "ctrl+s"]:  # one burst, as a fast typist or a paste delivers it
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await settle(pilot, app)
        await until(pilot, lambda: _checkpoint(engine, cp_id) == "crop the receipt")


def _checkpoint(engine, cp_id: int) -> str | None:  # type: ignore[no-untyped-def]
    from store.models import Checkpoint

    with session_scope(engine) as s:
        cp = s.get(Checkpoint, cp_id)
        return cp.description if cp else None


async def test_a_long_question_keeps_the_dialog_buttons_on_screen(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """Walk at 80x24: a discard question naming a long unsaved text pushed Stay/Discard below the
    screen's last row (the dialog is at most 90% high); the text now scrolls above the buttons."""
    from textual.widgets import Button

    from tui.screens.confirm import ConfirmDiscardScreen
    from tui.screens.conflict import ConflictScreen

    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        for screen in (ConfirmDiscardScreen("Not saved: " + "y" * 1500 + ". Discard?"), ConflictScreen("z" * 1500)):
            app.push_screen(screen)
            await settle(pilot, app)
            for button in app.screen.query(Button):
                assert app.screen.region.contains_region(button.region), (button.id, button.region)
            app.pop_screen()
            await settle(pilot, app)
