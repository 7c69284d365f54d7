"""Reports screen: tables for the chosen runs, exported files equal `chainmark report`."""

from __future__ import annotations

from click.testing import CliRunner

from tests.tui_review.conftest import settle
from tui.cli import cli
from tui.screens.reports import ReportsScreen


async def test_build_and_export_report(make_tui, engine, db_path, study, tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(ReportsScreen(embedder="hashing"))
        await settle(pilot, app)
        screen = app.screen
        await pilot.press("space", "g")
        await settle(pilot, app)
        assert screen.chosen == [study["run"]] and screen.results is not None
        assert screen.results[0]["metrics"]["AnsAcc"] == 60.0  # answers 2,4,4,6,6 vs expected 2..6: three right
        for name in ("report.md", "report.csv"):
            await pilot.press("e")
            screen.query_one("#export-path").value = str(tmp_path / name)  # typing a long path is slow
            await pilot.press("enter")
            await settle(pilot, app)
    for fmt in ("md", "csv"):
        result = CliRunner().invoke(cli, ["--db", str(db_path), "report", str(study["run"]), "--format", fmt,
                                          "--embedder", "hashing"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert (tmp_path / f"report.{fmt}").read_text(encoding="utf-8") == result.output
