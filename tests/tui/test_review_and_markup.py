"""Review rules on the editor (issue 16 item 8) and user text shown as typed, never as Rich markup
(item 9): ``[V]`` in a result, a thought or a document used to vanish or break the screen."""

from __future__ import annotations

from annotation import tasks as authoring
from store import session_scope
from store.models import Task
from tests.tui.conftest import png, settle, wait_for_saves
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.checkpoint_editor import CheckpointEditorScreen
from tui.screens.prompt import PromptScreen
from tui.screens.task_editor import TaskEditorScreen
from tests.support.must import must

TRICKY = "[V] axis, [b]not bold[/b] and [/] stray"


def _task(engine, blobs, status: str = "draft", author: str = "author") -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, author) as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(s, "mme", f"Query {TRICKY}", category=TRICKY)
        authoring.attach_asset(s, blobs, must(t.id), png())
        authoring.add_document(s, must(t.id), f"doc {TRICKY}", title=f"title {TRICKY}")
        authoring.add_step(
            s,
            must(t.id),
            tool_name="crop",
            tool_args={"image_index": 0},
            result_text=f"saw {TRICKY}",
            thought=f"think {TRICKY}",
        )
        authoring.add_step(s, must(t.id), final_answer=f"answer {TRICKY}")
        authoring.add_checkpoint(s, must(t.id), "cp1", axis="V", description=TRICKY)
        task_id = t.id
    if status != "draft":
        with session_scope(engine, author) as s:
            authoring.set_status(s, must(task_id), "submitted")
    return task_id


def _text(widget) -> str:  # type: ignore[no-untyped-def]
    return str(widget.render())


async def test_user_text_is_shown_as_typed(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task_id))
        await settle(pilot, app)
        editor = app.screen
        assert TRICKY in _text(editor.query_one("#documents"))
        assert f"saw {TRICKY}"[:40] in _text(editor.query_one("#chain-summary"))
        assert f"answer {TRICKY}" in _text(editor.query_one("#chain-summary"))
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        builder = app.screen
        steps = builder.query_one("#step-list")
        assert f"ANSWER answer {TRICKY}" in str(steps.get_option_at_index(1).prompt)
        steps.focus()
        steps.highlighted = 0
        await settle(pilot, app)
        assert f"think {TRICKY}" in _text(builder.query_one("#result"))
        await pilot.press("escape")
        await settle(pilot, app)
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        shown = str(app.screen.query_one("#checkpoint-list").get_option_at_index(0).prompt)
        assert shown == f"cp1 [V] {TRICKY[:23]}…"  # cut with a mark, not silently
        assert app.is_running


async def test_reject_needs_a_reason_and_shows_it(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs, status="submitted")
    app = make_tui()  # acting as "tester", not the author
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task_id))
        await settle(pilot, app)
        editor = app.screen
        editor.set_status("rejected")
        await settle(pilot, app)
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("escape")  # no reason: not rejected
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert must(s.get(Task, task_id)).status == "submitted"
        editor.set_status("rejected")
        await settle(pilot, app)
        await pilot.press(*"count is [3] not 4", "enter")
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert must(s.get(Task, task_id)).status == "rejected"
        assert "rejected: count is [3] not 4 (tester)" in _text(editor.query_one("#task-title"))


async def test_authors_cannot_verify_their_own_task(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs, status="submitted", author="tester")
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task_id))
        await settle(pilot, app)
        editor = app.screen
        editor.set_status("verified")
        await settle(pilot, app)
        assert editor.query_one("#status").value == "submitted"
        # an edit to a submitted task sends it back to draft, and the editor says why
        editor.query_one("#meta-level").value = "2"
        await wait_for_saves(pilot, app)
        assert "draft: edited after it was submitted" in _text(editor.query_one("#task-title"))
    with session_scope(engine) as s:
        assert must(s.get(Task, task_id)).status == "draft"
