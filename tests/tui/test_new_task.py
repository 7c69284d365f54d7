"""New task (issue 16 item 5): the benchmark is chosen from the existing ones; nothing typed can
create a benchmark by accident, and with none yet the screen says how to make one."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import Benchmark, Task
from tests.tui.conftest import settle
from tui.screens.new_task import NO_BENCHMARKS, NewTaskScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.selection import chosen
from tests.support.must import must


async def test_new_task_picks_an_existing_benchmark_by_keyboard(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.create_benchmark(s, "alpha", "gta", tool_set="gta")
        authoring.create_benchmark(s, "beta", "agentic-mme", tool_set="agentic-mme")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(NewTaskScreen())
        await settle(pilot, app)
        screen = app.screen
        assert app.focused is screen.query_one("#benchmark")
        await pilot.press("enter", "down", "down", "enter")  # open the list, second benchmark
        await settle(pilot, app)
        assert chosen(screen.query_one("#benchmark")) == "beta"
        await pilot.press("tab", *"Which tool zooms?", "ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
    with session_scope(engine) as s:
        task = s.exec(select(Task)).one()
        assert (task.query, must(s.get(Benchmark, task.benchmark_id)).name) == ("Which tool zooms?", "beta")
        assert len(s.exec(select(Benchmark)).all()) == 2


async def test_without_benchmarks_nothing_is_created(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(NewTaskScreen("typo-bench"))
        await settle(pilot, app)
        screen = app.screen
        assert NO_BENCHMARKS in str(screen.query_one("#benchmark-hint").render())
        await pilot.press(*"A query", "ctrl+s")
        await settle(pilot, app)
        assert app.screen is screen
        await pilot.press("escape")  # the typed query is asked about before it is dropped
        await settle(pilot, app)
        assert app.screen is not screen and "query you typed" in str(app.screen.query_one("#confirm-question").render())
    with session_scope(engine) as s:
        assert s.exec(select(Benchmark)).all() == [] and s.exec(select(Task)).all() == []


@pytest.mark.parametrize("dialog", ["new task", "prompt", "help", "confirm"])
async def test_a_dialog_footer_names_the_dialogs_keys_not_the_screen_underneath(make_tui, engine, dialog) -> None:  # type: ignore[no-untyped-def]
    """Walk at 80x24: over home, the new-task dialog (and a prompt, the help) showed home's footer,
    "t Tasks q My queue n New task …", keys that do nothing while the dialog is open."""
    from tui.screens.confirm import ConfirmDiscardScreen
    from tui.screens.help import HelpScreen
    from tui.screens.prompt import PromptScreen

    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        home = app.screen
        screen, keys = {
            "new task": (lambda: NewTaskScreen(), "Create"),
            "prompt": (lambda: PromptScreen("Attach an image"), "Cancel"),
            "help": (lambda: HelpScreen(home), "Close"),
            "confirm": (lambda: ConfirmDiscardScreen("Discard?"), "Discard"),
        }[dialog]
        app.push_screen(screen())
        await settle(pilot, app)
        update = app.screen._compositor.render_full_update()
        bottom = "".join(seg.text for strip in list(update.strips)[-1] for seg in strip if not seg.control)
        assert keys in bottom and "My queue" not in bottom, bottom
