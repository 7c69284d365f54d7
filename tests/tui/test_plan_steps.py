"""An ATP chain is authored in the chain builder like any other: its tools are plan-only, so ctrl+r
checks the call (never executes it) and ctrl+s accepts it as a step. It used to answer "plan-only
tool … never executed" and then "run a tool successfully first": no ATP step could be recorded."""

from __future__ import annotations

from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import ReferenceStep
from tests.tui.conftest import settle
from tui.screens.chain_builder import ChainBuilderScreen
from tui.widgets.arg_form import ArgForm


async def test_a_planned_call_is_checked_and_accepted_as_a_step(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "atp", "atp", tool_set="atp")
        task_id = int(authoring.create_task(s, "atp", "How do I make a fruit bowl?").id or 0)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        builder = app.screen
        assert builder.tool_name == "Reference"
        builder.query_one(ArgForm).set_value("img_index", 0)
        await pilot.press("ctrl+r")  # no description yet: refused, and says where it goes
        await settle(pilot, app)
        assert not builder.pending["result"].ok
        assert "thought field" in str(builder.query_one("#result").render())
        builder.query_one("#thought").focus()
        await pilot.press(*"the washed fruit")
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert builder.pending["result"].ok, builder.pending["result"].error
        assert "planned call (not executed)" in str(builder.query_one("#result").render())
        await pilot.press("ctrl+s")
        await settle(pilot, app)
    with session_scope(engine) as s:
        steps = s.exec(select(ReferenceStep).where(ReferenceStep.task_id == task_id)).all()
        assert [(st.tool_name, st.tool_args, st.thought) for st in steps] == [
            ("Reference", {"img_index": 0}, "the washed fruit")
        ]
