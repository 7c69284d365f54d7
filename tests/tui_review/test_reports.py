"""Reports screen: tables for the chosen runs, exported files equal `chainmark report`."""

from __future__ import annotations

from click.testing import CliRunner
from textual.widgets import Input

from tests.support.scripted_openai import scripted_openai  # noqa: F401  (fixture)
from tests.tui_review.conftest import settle
from tui.cli import cli
from tui.screens.reports import ReportsScreen


async def _report_of_the_study(pilot, app) -> ReportsScreen:  # type: ignore[no-untyped-def]
    """The reports screen with the study's run chosen and its report built (space, g)."""
    await settle(pilot, app)
    screen = ReportsScreen(embedder="hashing")
    app.push_screen(screen)
    await settle(pilot, app)
    await pilot.press("space", "g")
    await settle(pilot, app)
    return screen


async def test_build_and_export_report(make_tui, engine, db_path, study, tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = make_tui(actor="rev")  # a reviewer: ann still owes blind ratings on this run, which blinds its report
    async with app.run_test(size=(150, 44)) as pilot:
        screen = await _report_of_the_study(pilot, app)
        assert screen.chosen == [study["run"]] and screen.results is not None
        assert screen.results[0].metrics["AnsAcc"] == 60.0  # answers 2,4,4,6,6 vs expected 2..6: three right
        for name in ("report.md", "report.csv", "report.html"):
            await pilot.press("e")
            screen.query_one("#export-path", Input).value = str(tmp_path / name)  # typing a long path is slow
            await pilot.press("enter")
            await settle(pilot, app)
    for fmt in ("md", "csv"):
        result = CliRunner().invoke(
            cli,
            ["--db", str(db_path), "report", str(study["run"]), "--format", fmt, "--embedder", "hashing"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        assert (tmp_path / f"report.{fmt}").read_text(encoding="utf-8") == result.output
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "headline metrics" in page and "<table>" in page


async def test_an_export_asked_just_before_leaving_is_written(make_tui, engine, study, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """enter on the export path, then escape at once: the screen's unmount cancelled its workers, and an
    export whose worker had not started yet was never written, without a word. Here the unmount's cancel
    comes in the same turn as the enter."""
    from tests.tui.conftest import until

    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 44)) as pilot:
        screen = await _report_of_the_study(pilot, app)
        await pilot.press("e")
        box = screen.query_one("#export-path", Input)
        box.value = str(tmp_path / "report.md")
        screen._export(Input.Submitted(box, box.value))  # enter
        app.workers.cancel_node(screen)  # what leaving does (Widget._on_unmount)
        await pilot.press("escape")
        await until(pilot, lambda: (tmp_path / "report.md").exists())
        await settle(pilot, app)
    assert "AnsAcc" in (tmp_path / "report.md").read_text(encoding="utf-8")


async def test_atp_report_shows_the_final_score_after_the_three_judges(
    make_tui, engine, blobs, scripted_openai, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import json

    from evaluation.judges.runner import judge_run
    from tests.scoring.test_judges import atp_run
    from tests.support.scripted_openai import text

    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    run_id = atp_run(engine, scripted_openai.base_url)
    checks = {
        k: True
        for k in (
            "necessity",
            "semantic_position",
            "structural_integrity",
            "tool_choice",
            "parameter_accuracy",
            "format_correctness",
        )
    }
    scripted_openai.push(
        text(json.dumps({"calls": [{"index": 0, **checks}]})),
        text('{"missed": []}'),
        text('{"score": 64, "tier": "good but flawed"}'),
    )
    for judge in ("atp-precision", "atp-recall", "atp-chief"):
        judge_run(engine, blobs, run_id, judge, "judge-ep")
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(ReportsScreen(run_ids=(run_id,), embedder="hashing"))
        await settle(pilot, app)
        screen = app.screen
        assert screen.results is not None and screen.results[0].metrics["FS"] == 64.0
        import io

        from rich.console import Console

        from tui.screens.reports import report_renderable

        console = Console(width=150, record=True, file=io.StringIO())
        console.print(report_renderable(screen.results, None))
        shown = console.export_text()
        assert "atp-demo (atp): headline metrics" in shown and "FS" in shown and "64" in shown
