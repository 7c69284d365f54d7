"""Generated walks over every authoring form (issue 16 items 1 and 2): every checkpoint kind (S, V, R)
is created, reopened, edited and deleted at 80×24 and 160×48, with the stored rows checked after each
step. (Every tool form opened by arrowing is in ``tool_form_walk.py``.)
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select, col

from annotation import tasks as authoring
from store import session_scope
from store.models import Checkpoint, OrderingConstraint, Task
from tests.tui.conftest import png, settle, until  # until: imported from here by other test files
from tui.screens.checkpoint_editor import CheckpointEditorScreen
from tui.screens.confirm import ConfirmDiscardScreen
from tui.widgets.selection import choose
from tests.support.must import must

SIZES = [(80, 24), (160, 48)]


async def until_shown(pilot, app, screen_type: Any, selector: str):  # type: ignore[no-untyped-def]
    """Wait until ``screen_type`` is the current screen with ``selector`` composed in it (a screen is
    current before its children are mounted: on a busy machine a query right after it finds nothing)."""
    await until(pilot, lambda: isinstance(app.screen, screen_type) and bool(app.screen.query(selector)))
    return app.screen.query_one(selector)


def _task_for(engine, blobs, tool_set: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, f"b-{tool_set}", tool_set, tool_set=tool_set)
        t = authoring.create_task(s, f"b-{tool_set}", "What is shown?")
        authoring.attach_asset(s, blobs, must(t.id), png(120, 80))
        return t.id


def _rows(engine, task_id: int) -> list[tuple]:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        cps = s.exec(select(Checkpoint).where(Checkpoint.task_id == task_id).order_by(col(Checkpoint.id))).all()
        return [
            (
                c.key,
                c.axis,
                c.step_id,
                c.gt_asset_id,
                c.description,
                c.code_check,
                c.visual_check,
                c.search_check,
                c.answer_check,
            )
            for c in cps
        ]


async def _fill(pilot, app, values: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    for name, value in values.items():
        app.screen.query_one(f"#cp-{name}").value = value
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_checkpoint_kind_saves_edits_and_deletes(make_tui, engine, blobs, size) -> None:  # type: ignore[no-untyped-def]
    task_id = _task_for(engine, blobs, "agentic-mme")
    with session_scope(engine, "tester") as s:
        step = authoring.add_step(s, task_id, tool_name="crop", tool_args={"image_index": 0}, result_text="ok")
        art = authoring.attach_asset(s, blobs, task_id, png(40, 40, "#ff0000"), role="artifact", step_id=step.id)
        step_id, art_id = step.id, art.asset_id
    app = make_tui()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        ed = app.screen
        assert isinstance(ed, CheckpointEditorScreen)
        # S: no step, no GT artifact (the blank selects once failed with "NoSelection is not supported")
        assert ed.query_one("#cp-key").value == "cp1"
        choose(ed.query_one("#axis"), "S")
        await _fill(pilot, app, {"description": "finds the shop", "s_keywords": "shop, name", "s_answer": "Acme"})
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        # the next key follows on (it once repeated cp1, so the second save failed)
        assert ed.query_one("#cp-key").value == "cp2"
        # V: tied to the step, with its artifact as ground truth and a code check
        choose(ed.query_one("#axis"), "V")
        choose(ed.query_one("#step"), step_id)
        choose(ed.query_one("#gt"), art_id)
        await _fill(
            pilot,
            app,
            {
                "tools": "crop",
                "code_tool": "crop",
                "code_verifier": "require_op:crop",
                "v_question": "Is it red?",
                "v_answer": "yes",
            },
        )
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert ed.query_one("#cp-key").value == "cp3"
        # R: answer check only
        choose(ed.query_one("#axis"), "R")
        choose(ed.query_one("#match"), "numeric")
        await _fill(pilot, app, {"a_target": "42", "a_tolerance": "0.5"})
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert _rows(engine, task_id) == [
            (
                "cp1",
                "S",
                None,
                None,
                "finds the shop",
                None,
                None,
                {"keywords": ["shop", "name"], "urls": [], "expected_answer": "Acme"},
                None,
            ),
            (
                "cp2",
                "V",
                step_id,
                art_id,
                None,
                {"tool": "crop", "verifier": "require_op:crop"},
                {"question": "Is it red?", "expected_answer": "yes"},
                None,
                None,
            ),
            (
                "cp3",
                "R",
                None,
                None,
                None,
                None,
                None,
                None,
                {"match_type": "numeric", "target": "42", "tolerance": 0.5},
            ),
        ]
        # open each existing checkpoint from the list (the blank selects once crashed here) and edit it
        cps = ed.query_one("#checkpoint-list")
        for index, key in enumerate(["cp1", "cp2", "cp3"]):
            cps.focus()
            cps.highlighted = index
            await pilot.press("enter")
            await settle(pilot, app)
            assert ed.query_one("#cp-key").value == key
            assert ed.editing is not None
            ed.query_one("#cp-description").value = f"edited {key}"
            await pilot.press("ctrl+s")
            await settle(pilot, app)
        rows = _rows(engine, task_id)
        assert [r[4] for r in rows] == ["edited cp1", "edited cp2", "edited cp3"]
        assert rows[1][2:4] == (step_id, art_id) and rows[0][2:4] == (None, None)
        # an ordering constraint, then delete it and a checkpoint from their lists
        ed.query_one("#order-seq").value = "cp1 > cp2"
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert [o.sequence for o in s.exec(select(OrderingConstraint)).all()] == [["cp1", "cp2"]]
        orders = ed.query_one("#ordering-list")
        orders.focus()
        orders.highlighted = 0
        await pilot.press("delete")
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert s.exec(select(OrderingConstraint)).all() == []
        cps.focus()
        cps.highlighted = 2
        await pilot.press("delete")
        await settle(pilot, app)
        assert [r[0] for r in _rows(engine, task_id)] == ["cp1", "cp2"]
        await pilot.press("ctrl+z")  # undo brings it back
        await settle(pilot, app)
        assert [r[0] for r in _rows(engine, task_id)] == ["cp1", "cp2", "cp3"]
        assert app.is_running


async def test_a_failed_checkpoint_save_keeps_the_form(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task_for(engine, blobs, "agentic-mme")
    with session_scope(engine, "tester") as s:
        authoring.add_checkpoint(s, task_id, "cp1", axis="S", description="first")
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        ed = app.screen
        # a key that is already used: the store refuses, and nothing typed is lost
        await _fill(pilot, app, {"key": "cp1", "description": "my long description", "v_question": "Q?"})
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert ed.query_one("#cp-description").value == "my long description"
        assert ed.query_one("#cp-v_question").value == "Q?"
        # a bad number is caught before saving, also keeping the form
        await _fill(pilot, app, {"key": "cp9", "weight": "heavy"})
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert ed.query_one("#cp-description").value == "my long description"
        await _fill(pilot, app, {"weight": "2"})
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert [r[0] for r in _rows(engine, task_id)] == ["cp1", "cp9"]


async def test_leaving_the_checkpoint_form_asks_first(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task_for(engine, blobs, "agentic-mme")
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        ed = app.screen
        await _fill(pilot, app, {"description": "half-typed"})
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen)
        await pilot.press("escape")  # escape means stay
        await settle(pilot, app)
        assert app.screen is ed and ed.query_one("#cp-description").value == "half-typed"
        await pilot.press("escape", "d")  # an explicit discard leaves
        await settle(pilot, app)
        assert app.screen is not ed
        # an untouched form leaves without asking
        app.push_screen(CheckpointEditorScreen(task_id))
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, (ConfirmDiscardScreen, CheckpointEditorScreen))
    with session_scope(engine) as s:
        assert s.exec(select(Checkpoint)).all() == []
        assert must(s.get(Task, task_id)).revision == 1


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_guidelines_source_gets_half_the_screen(make_tui, engine, size) -> None:  # type: ignore[no-untyped-def]
    """The Markdown source editor beside the rendered guidelines was 2 cells wide: nothing to edit in."""
    from tui.screens.guidelines import GuidelinesScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", guidelines="# Rules")
    app = make_tui()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        app.push_screen(GuidelinesScreen("mme", "# Rules"))
        await settle(pilot, app)
        source, view = app.screen.query_one("#guidelines-source"), app.screen.query_one("#guidelines-view")
        assert abs(source.region.width - view.region.width) <= 1
        assert source.region.width >= size[0] // 2 - 1


async def test_tab_from_the_tool_list_lands_in_the_first_argument(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Walk: pick GoogleSearch, tab, type the search: the text went nowhere (the form's scroll container
    took the focus first) and ctrl+r then said "missing required field query"."""
    from tui.screens.chain_builder import ChainBuilderScreen

    task_id = _task_for(engine, blobs, "gta")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        builder = app.screen
        assert isinstance(builder, ChainBuilderScreen)
        while builder.tool_name != "GoogleSearch":
            await pilot.press("down")
            await settle(pilot, app)
        await pilot.press("tab", *"cafe prices")
        await settle(pilot, app)
        from textual.widgets import Input

        assert builder.query_one("#arg-query", Input).value == "cafe prices"


@pytest.mark.parametrize("blind", [False, True])
async def test_the_chain_builder_shows_the_question(make_tui, engine, blobs, blind) -> None:  # type: ignore[no-untyped-def]
    """Walk: the chain builder (and "solve blind", where it matters most) showed no query anywhere, at
    160x48 as at 80x24: the chain was built without the question in sight."""
    from tui.screens.chain_builder import ChainBuilderScreen

    task_id = _task_for(engine, blobs, "gta")
    with session_scope(engine) as s:
        query = authoring.get_task(s, task_id).query
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id, blind=blind))
        await settle(pilot, app)
        shown = app.screen.query_one("#task-query")
        assert query[:30] in str(shown.render()) and shown.region.height >= 1
