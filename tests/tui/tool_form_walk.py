"""Every tool of every tool set has its argument form opened by arrowing through the palette (the way
an annotator does, and the way ``flip`` once crashed the app), in the chain builder and in "solve
blind", at 80×24 and 160×48 (issue 16 items 1 and 2).

The walk is the suite's longest (71 tools, about 40 s of CPU at each size and mode), so each size and
mode is a test file of its own (``test_tool_forms_*.py``): ``--dist loadfile`` gives whole files to its
workers, and three files of a third each keep one worker from running the whole walk at the end.
"""

from __future__ import annotations

from evaluation.tools import get_tool_set, tool_set_names
from tests.tui.conftest import settle
from tests.tui.test_authoring_forms import _task_for, until
from tui.screens.chain_builder import ChainBuilderScreen
from tui.widgets.arg_form import ArgForm, fields_of


def _form_shows(builder, form, name: str, paths: list[str]):  # type: ignore[no-untyped-def]
    return lambda: (
        builder.tool_name == name
        and [f.path for f in form.fields] == paths
        and len(form.query(".arg-row")) == len(paths)
    )


async def walk_every_tool_form(make_tui, engine, blobs, size: tuple[int, int], blind: bool) -> None:  # type: ignore[no-untyped-def]
    """Open each tool set's builder (or "solve blind") and arrow down its palette, checking each form."""
    tasks = {name: _task_for(engine, blobs, name) for name in tool_set_names()}
    app = make_tui()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        for tool_set, task_id in tasks.items():
            app.push_screen(ChainBuilderScreen(task_id, blind=blind))
            await settle(pilot, app)
            builder = app.screen
            assert isinstance(builder, ChainBuilderScreen) and builder.tool_set == tool_set
            tools = get_tool_set(tool_set).all_tools()
            form = builder.query_one(ArgForm)
            for i, tool in enumerate(tools):
                if i:
                    await pilot.press("down")
                await until(pilot, _form_shows(builder, form, tool.name, [f.path for f in fields_of(tool.parameters)]))
                form.values()  # every default converts (enums left blank are simply absent)
            await pilot.press("escape")
            await settle(pilot, app)
        assert app.is_running
