"""The task editor's tool checklist (issue 33): the benchmark's tool set, the task's tool list ticked;
space toggles a tool, the list is saved, and an editor opened again shows what the task holds."""

from __future__ import annotations

from sqlmodel import Session
from textual.widgets import OptionList, SelectionList

from annotation import tasks as authoring
from store import session_scope
from store.models import Task
from tests.support.must import must
from tests.tui.conftest import settle, wait_for_saves
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.task_editor import TaskEditorScreen


def gta_task(engine, tools: list[str] | None = None) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.create_benchmark(s, "receipts", "gta")
        t = authoring.create_task(s, "receipts", "Twice the total?", tools_offered=tools or [])
        return must(t.id)


async def test_ticking_tools_in_the_editor_saves_the_tasks_tool_list(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    task_id = gta_task(engine)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot, app)
        box = app.screen.query_one("#tools", SelectionList)
        names = [str(box.get_option_at_index(i).value) for i in range(box.option_count)]
        assert names[:3] == ["OCR", "ImageDescription", "RegionAttributeDescription"] and "Calculator" in names
        assert box.selected == []
        box.focus()
        await pilot.press("space")  # OCR
        for _ in range(names.index("Calculator")):
            await pilot.press("down")
        await pilot.press("space")
        await wait_for_saves(pilot, app)
        with Session(engine) as s:
            assert must(s.get(Task, task_id)).tools_offered == ["OCR", "Calculator"]
        await pilot.press("escape")
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task_id))
        await settle(pilot, app)
        again = app.screen.query_one("#tools", SelectionList)
        assert again is not box and sorted(again.selected) == ["Calculator", "OCR"]
        again.focus()
        await pilot.press("space")  # untick OCR
        await wait_for_saves(pilot, app)
        with Session(engine) as s:
            assert must(s.get(Task, task_id)).tools_offered == ["Calculator"]


async def test_a_chain_tool_left_off_the_list_is_flagged_in_the_editor_and_the_builder(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = gta_task(engine, ["OCR"])
    with session_scope(engine, "tester") as s:
        authoring.add_step(s, task_id, tool_name="Calculator", tool_args={"expression": "1+1"}, result_text="2")
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot, app)
        warnings = str(app.screen.query_one("#warnings").render())
        assert "chain-tool-not-offered" in warnings and "Calculator" in warnings
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        palette = app.screen.query_one("#palette", OptionList)
        labels = {
            str(o.id): str(o.prompt) for o in (palette.get_option_at_index(i) for i in range(palette.option_count))
        }
        assert "not offered" not in labels["OCR"] and labels["Calculator"].endswith("(not offered)")
