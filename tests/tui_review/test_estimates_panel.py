"""The estimates panel shows what ``chainmark estimate`` and ``review plan --dry-run`` print, computed
in a worker, on the run the end-to-end CLI test builds (a scripted judge, 30 human ratings)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from rich.text import Text
from textual.widgets import DataTable, Static

from tests.review.test_estimate_cli import JUDGE, judged_run  # noqa: F401  (fixture)
from tests.support.scripted_openai import scripted_openai  # noqa: F401  (fixture)
from tests.tui_review.conftest import settle
from tui.cli import cli
from tui.screens.review.estimates import EstimatesScreen, interval_bar


def _cli(db_path: Any, *args: str) -> Any:
    out = CliRunner().invoke(cli, ["--db", str(db_path), *args, "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


async def test_panel_shows_the_cli_intervals_and_next_items(make_tui, db_path, judged_run) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    run_id, _ = judged_run
    [want] = _cli(db_path, "estimate", str(run_id), "--judge", JUDGE, "--scale", "yes-no", "--by", "category")
    plan = _cli(
        db_path,
        "review",
        "plan",
        str(run_id),
        "--judge",
        JUDGE,
        "--scale",
        "yes-no",
        "--budget",
        "10",
        "--annotators",
        "ann",
        "--dry-run",
    )
    app = make_tui(actor="rev")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(EstimatesScreen())  # no run or judge given: the newest run, the judge people rated beside
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, EstimatesScreen) and screen.data is not None
        assert (screen.data.run_id, screen.data.judge, screen.data.scale) == (run_id, JUDGE, "yes-no")
        assert screen.data.reports[0]["overall"] == want["overall"]
        title = str(screen.query_one("#est-title", Static).render())
        assert f"judge {JUDGE}" in title and "60 item(s), 30 with a human label" in title
        table = screen.query_one("#est-intervals", DataTable)
        rows = {tuple(map(str, table.get_row_at(i)[:2])): table.get_row_at(i) for i in range(table.row_count)}
        assert table.row_count == 12  # all, chart, ocr × four methods
        for key, label in (("judge_only", "judge only"), ("ppi++", "PPI++"), ("human_only", "humans only")):
            d = want["overall"][key]
            row = rows[("all", label)]
            assert str(row[2]) == f"{d['estimate']:.3f}"
            assert str(row[3]) == f"[{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]"
        # the narrower interval draws the shorter bar
        assert str(rows[("all", "PPI++")][5]).count("━") < str(rows[("all", "humans only")][5]).count("━")
        nxt = screen.query_one("#est-next", DataTable)
        shown = [Text.from_markup(nxt.get_row_at(i)[0]).plain for i in range(nxt.row_count)]  # cells are markup
        assert shown == [p["label"] for p in plan["items"]]
        assert nxt.row_count == 10


def test_interval_bar() -> None:
    assert interval_bar([0.25, 0.75], 0.0, 1.0, width=9) == "··━━━━━··"
    assert interval_bar(None, 0.0, 1.0, width=3) == "   "


async def test_dashboard_opens_the_panel_on_its_scale(make_tui, judged_run) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from tui.screens.review.dashboard import DashboardScreen

    run_id, _ = judged_run
    app = make_tui(actor="rev")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(DashboardScreen(scale="yes-no", resamples=50))
        await settle(pilot, app)
        await pilot.press("e")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, EstimatesScreen) and screen.data is not None
        assert (screen.data.run_id, screen.data.judge, screen.data.scale) == (run_id, JUDGE, "yes-no")
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, DashboardScreen)
