"""At 80x24 the run list and the preference queue stay usable (and 160x48 keeps its layout)."""

from __future__ import annotations

from textual.widgets import DataTable

from annotation import tasks as authoring
from store import session_scope
from store.models import Run
from tests.tui_review.conftest import drawn, settle
from tests.tui_review.test_preference_queue import second_run
from tui.screens.review.nav import screen_for
from tui.screens.runs.monitor import RunMonitorScreen


async def test_unnamed_runs_leave_the_benchmark_in_sight_at_80_columns(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        bench = authoring.ensure_benchmark(s, "counting-benchmark", "gta")
        s.add(Run(benchmark_id=bench.id or 0, mode="atomic", status="done"))  # no name, as `chainmark run` makes
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        table = app.screen.query_one("#runs-table", DataTable)
        assert [c.width for c in table.ordered_columns[1:3]] == [len("name"), len("counting-benchmark")]
        assert "counting-benchmark" in drawn(table)  # was cut to "counting-": 12 empty name columns before it
        assert app.screen.query_one("#run-live").outer_size.width == 36  # the live panel gives the list room
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        assert app.screen.query_one("#run-live").outer_size.width == 50


async def test_preference_answers_keep_their_lines_at_80x24(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    second_run(engine, study)
    for size, least, side_by_side in (((80, 24), 5, False), ((160, 48), 20, True)):
        app = make_tui(actor="ann")
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            app.push_screen(screen_for("prefs"))
            await settle(pilot, app)
            a, b = app.screen.query_one("#pref-a"), app.screen.query_one("#pref-b")
            assert (a.region.y == b.region.y) is side_by_side  # stacked in a narrow terminal
            assert a.size.height >= least and b.size.height >= least, (size, a.size, b.size)  # 80x24: was 2 rows
