"""Creating a benchmark in the TUI (issue 33): ``b`` on home opens a form (name, format, tool set,
description, guidelines) that calls what ``chainmark benchmarks add`` calls; the new benchmark is then
selected on home. Refusals are said on the form, with what was typed kept; quitting with typing asks."""

from __future__ import annotations

from sqlmodel import select
from textual.widgets import DataTable, Input, Select, TextArea

from annotation import tasks as authoring
from annotation.formats.registry import describe_formats
from evaluation.tools import tool_set_names
from store import session_scope
from store.models import Benchmark
from tests.tui.conftest import settle
from tui.screens.confirm import ConfirmDiscardScreen
from tui.screens.home import HomeScreen
from tui.screens.new_benchmark import NewBenchmarkScreen
from tui.widgets.selection import chosen


async def open_form(pilot, app) -> NewBenchmarkScreen:  # type: ignore[no-untyped-def]
    """Home, then ``b``: the new-benchmark form, once it is shown."""
    await settle(pilot, app)
    await pilot.press("b")
    await settle(pilot, app)
    assert isinstance(app.screen, NewBenchmarkScreen)
    return app.screen


async def test_a_benchmark_made_in_the_form_is_stored_and_selected_on_home(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    formats = [name for name, _ in describe_formats("benchmark")]
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, app)
        assert app.focused is form.query_one("#name")
        await pilot.press(*"receipts", "tab")
        assert chosen(form.query_one("#format", Select)) == formats[0]
        await pilot.press("enter", *["down"] * formats.index("gta"), "enter")  # the format list, gta
        await settle(pilot, app)
        assert chosen(form.query_one("#format", Select)) == "gta"
        assert chosen(form.query_one("#tool-set", Select)) == "gta"  # the one gta's plugin names
        sets = tool_set_names()  # the list opens on gta (after the blank "none"): down to vtc
        await pilot.press("tab", "enter", *["down"] * (sets.index("vtc") - sets.index("gta")), "enter")
        await settle(pilot, app)
        assert chosen(form.query_one("#tool-set", Select)) == "vtc"
        await pilot.press("tab", *"Shop receipts", "tab", *"# Rules", "enter", *"Totals only.", "ctrl+s")
        await settle(pilot, app)
        home = app.screen
        assert isinstance(home, HomeScreen)
        table = home.query_one("#benchmarks", DataTable)
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == "receipts"
    with session_scope(engine) as s:
        bench = s.exec(select(Benchmark)).one()
        assert (bench.name, bench.source_format, bench.tool_set, bench.description, bench.guidelines) == (
            "receipts",
            "gta",
            "vtc",
            "Shop receipts",
            "# Rules\nTotals only.",
        )


async def test_a_refused_benchmark_says_why_on_the_form_and_keeps_the_typing(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.create_benchmark(s, "receipts", "gta")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, app)
        await pilot.press("tab", "tab", "tab", *"again", "ctrl+s")  # no name
        await settle(pilot, app)
        assert app.screen is form and "needs a name" in str(form.query_one("#form-error").render())
        await pilot.press("shift+tab", "shift+tab", "shift+tab", *"receipts", "ctrl+s")
        await settle(pilot, app)
        assert app.screen is form
        assert "a benchmark named 'receipts' already exists" in str(form.query_one("#form-error").render())
        assert form.query_one("#name", Input).value == "receipts"
        assert form.query_one("#description", Input).value == "again"
    with session_scope(engine) as s:
        assert [b.name for b in s.exec(select(Benchmark)).all()] == ["receipts"]


async def test_leaving_the_form_with_typing_asks_first(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, app)
        await pilot.press(*"half typed", "ctrl+q")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen) and app.is_running
        assert "name" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("escape")  # stay: the typing is still there
        await settle(pilot, app)
        assert app.screen is form and form.query_one("#name", Input).value == "half typed"
        await pilot.press("escape")  # cancel asks too
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen)
    with session_scope(engine) as s:
        assert s.exec(select(Benchmark)).all() == []


def test_the_forms_choices_come_from_the_registries() -> None:
    """Not a hard-coded list: every plugin's format and every registered tool set is offered."""
    import inspect

    source = inspect.getsource(NewBenchmarkScreen)
    assert "describe_formats(" in source and "tool_set_names()" in source
    assert TextArea is not None
