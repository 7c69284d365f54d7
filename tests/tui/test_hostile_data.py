"""Data that looks like markup or carries terminal controls, in every name a drop-down lists.

Benchmark, category, level, endpoint and people's names come from datasets and other people. A
``Select`` reads a plain string label as Textual markup: ``[/x]`` raised ``MarkupError`` and took the
whole app down as soon as the task list, the run launcher or the new-task form laid out its options.
"""

from __future__ import annotations

import pytest

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

pytestmark = pytest.mark.renders  # a widget that fails to draw is what these walks hunt

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
        await pilot.pause()
        overlay = select.query_one(SelectOverlay)
        assert overlay.display, select.id
        shown += [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
        await pilot.press("escape")
        await pilot.pause()
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


ESC = "\x1b[2J\x1b]0;pwned\x07"  # clear the screen, retitle the window


def _sent_to_terminal(app) -> str:  # type: ignore[no-untyped-def]
    """Everything the screen would write to the terminal now, but cursor/control segments."""
    update = app.screen._compositor.render_full_update()
    return "".join(seg.text for row in update.strips for strip in row for seg in strip if not seg.control)


async def test_escape_sequences_in_task_data_never_reach_the_terminal(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    from tests.tui.conftest import png
    from tui.screens.chain_builder import ChainBuilderScreen
    from tui.screens.checkpoint_editor import CheckpointEditorScreen
    from tui.screens.task_editor import TaskEditorScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(
            s,
            "mme",
            f"query {ESC}",
            category=f"cat{ESC}",
            level=f"lvl{ESC}",
            answer_spec={"kind": "exact", "value": f"v{ESC}"},
        )
        task_id = int(t.id or 0)
        authoring.attach_asset(s, blobs, task_id, png())
        step = authoring.add_step(
            s, task_id, tool_name="crop", tool_args={"image_index": 0}, result_text=f"saw{ESC}", thought=f"t{ESC}"
        )
        authoring.add_checkpoint(s, task_id, "cp1", axis="V", step_id=step.id, description=f"d{ESC}")
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        for screen in (TaskEditorScreen(task_id), ChainBuilderScreen(task_id), CheckpointEditorScreen(task_id)):
            app.push_screen(screen)
            await settle(pilot, app)
            if isinstance(screen, CheckpointEditorScreen):
                await pilot.press("enter")  # the checkpoint into the form: its description in an input
                await settle(pilot, app)
            sent = _sent_to_terminal(app)
            assert "\x1b" not in sent and "\x07" not in sent, type(screen).__name__
            assert "␛[2J" in sent or "\\x1b[2J" in sent, type(screen).__name__  # shown, as a stand-in
            await pilot.press("escape")
            await settle(pilot, app)


async def test_a_missing_image_file_is_named_as_missing(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """An image whose blob file was deleted: the editor said only "image failed 'bca26e…'" (a KeyError)."""
    from tui.screens.task_editor import TaskEditorScreen

    task_id = _task_whose_image_file_is_gone(engine, blobs, "agentic-mme", "what colour?")
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task_id))
        await settle(pilot, app)
        messages = [str(n.message) for n in app._notifications]
        assert any("missing from the blob store" in m for m in messages), messages
        assert app.is_running


async def test_a_tool_run_that_fails_says_so_in_place_of_running(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """ctrl+r on an image whose file is gone: "running OCR…" stayed on screen after the run had failed."""
    from tui.screens.chain_builder import ChainBuilderScreen

    task_id = _task_whose_image_file_is_gone(engine, blobs, "gta", "what does it say?")
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        builder = app.screen
        assert builder.tool_name == "OCR"
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        shown = str(builder.query_one("#result").render())
        assert "running" not in shown and "missing from the blob store" in shown, shown


def _task_whose_image_file_is_gone(engine, blobs, fmt: str, query: str) -> int:  # type: ignore[no-untyped-def]
    """A task in a new benchmark named after ``fmt``, with one image whose blob file has been deleted."""
    from tests.tui.conftest import png

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, fmt, fmt, tool_set=fmt)
        t = authoring.create_task(s, fmt, query)
        task_id = int(t.id or 0)
        authoring.attach_asset(s, blobs, task_id, png())
    for path in blobs.root.rglob("*"):
        if path.is_file():
            path.unlink()
    return task_id
