"""The compare screen: mark two runs in the runs list, compare them, open a task side by side."""

from __future__ import annotations

from textual.widgets import DataTable, Static
from textual.worker import WorkerCancelled

from tests.compare.test_compare import two_gta_runs
from tests.tui_review.conftest import make_tui, no_cursor_blink, settle  # noqa: F401  (fixtures)
from tui.screens.runs.compare import CompareScreen, SideBySideScreen
from tui.screens.runs.monitor import RunMonitorScreen


async def _quiet(pilot, app) -> None:  # type: ignore[no-untyped-def]
    """Wait for workers; moving the cursor supersedes (cancels) the runs list's previous load."""
    for _ in range(4):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
    await pilot.pause()


def _text(widget: Static) -> str:
    return str(widget.render())


async def test_mark_two_runs_compare_and_open_side_by_side(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    a, b, tasks = two_gta_runs(engine)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        monitor = app.screen
        table = monitor.query_one("#runs-table", DataTable)
        keys = [k.value for k in table.rows]
        await pilot.press("v")  # nothing marked yet: a warning, no new screen
        assert app.screen is monitor
        for run_id in (a, b):
            table.move_cursor(row=keys.index(str(run_id)))
            await _quiet(pilot, app)
            await pilot.press("space")
        assert monitor.marked == [a, b]
        assert str(table.get_cell_at((keys.index(str(a)), 0))) == f"●{a}"
        await pilot.press("v")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.run_ids == [a, b]
        await settle(pilot, app)
        cmp_table = screen.query_one("#cmp-table", DataTable)
        assert [k.value for k in cmp_table.rows] == [str(tasks["t1"]), str(tasks["t2"]), str(tasks["t0"])]
        summary = _text(screen.query_one("#cmp-summary", Static))
        assert "3 shared task(s), 2 differ" in summary
        assert f"A = alpha (run {a}): mean 0.67, right 2" in summary and f"B = beta (run {b})" in summary
        first = [str(c) for c in cmp_table.get_row_at(0)]
        assert first[0] == "1" and first[2].startswith("✓ 1.00") and first[3].startswith("✗ 0.00 4")
        await pilot.press("f")  # any-differ
        await pilot.press("f")  # a-right-b-wrong
        assert [k.value for k in cmp_table.rows] == [str(tasks["t1"])]
        await pilot.press("enter")
        await settle(pilot, app)
        sbs = app.screen
        assert isinstance(sbs, SideBySideScreen) and sbs.task_id == tasks["t1"]
        heads = [_text(s) for s in sbs.query("#sbs-head Static").results(Static)]
        assert heads[0].startswith(f"alpha (run {a}) · done · answer: 5")
        assert heads[1].startswith(f"beta (run {b}) · done · answer: 4")
        assert len(sbs.query(".sbs-row")) >= 1
        await pilot.press("g")
        await settle(pilot, app)
        heads = [_text(s) for s in sbs.query("#sbs-head Static").results(Static)]
        assert heads[0] == "Reference chain" and len(heads) == 3


async def test_a_comparison_that_cannot_be_scored_says_why_where_the_table_was(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """A run deleted meanwhile: the failure notice faded and the table's spinner ran on for ever under
    "scoring the runs…". The reason stays in the summary line."""
    from tests.tui.conftest import until

    a, _b, _tasks = two_gta_runs(engine)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        screen = CompareScreen([a, 987654], embedder="hashing")
        app.push_screen(screen)
        await until(pilot, lambda: bool(screen.query("#cmp-summary")))
        summary = screen.query_one("#cmp-summary", Static)
        await until(pilot, lambda: _text(summary).startswith("could not score the runs: "))
        assert "987654" in _text(summary)
        assert not screen.query_one("#cmp-table", DataTable).loading


async def test_side_by_side_whose_trajectories_cannot_be_read_says_why(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """A trajectory gone meanwhile: "loading…" stayed above the columns for ever once the notice faded."""
    from tests.tui.conftest import until

    _a, _b, tasks = two_gta_runs(engine)
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        screen = SideBySideScreen(tasks["t0"], [("gone", 987654, "", None)], notes=[])
        app.push_screen(screen)
        await until(pilot, lambda: bool(screen.query("#sbs-task")))
        task = screen.query_one("#sbs-task", Static)
        await until(pilot, lambda: _text(task).startswith("could not load the trajectories: "))
