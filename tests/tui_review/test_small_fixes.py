"""Small review fixes: the launcher asks for an endpoint and keeps the form; a judge's report being
rated is shown as the report."""

from __future__ import annotations

from textual.widgets import Input, Select, Static

from annotation import tasks as authoring
from evaluation.harness import add_endpoint
from store import session_scope
from tests.tui_review.conftest import settle
from tui.screens.runs.launcher import LaunchScreen
from tui.widgets.review.panels import content_text


async def test_launch_without_an_endpoint_asks_for_one_and_keeps_the_form(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "chainmark", tool_set="agentic-mme")
        authoring.create_task(s, "mme", "What colour?", answer_spec={"kind": "contains", "value": "red"})
        add_endpoint(s, "one", "http://127.0.0.1:9/v1", "m")
        add_endpoint(s, "two", "http://127.0.0.1:9/v1", "m")  # two endpoints: none is preselected
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(LaunchScreen())
        await settle(pilot, app)
        form = app.screen
        form.query_one("#bench", Select).value = "mme"
        form.query_one("#run-name", Input).value = "keep me"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert app.screen is form
        error = str(form.query_one("#launch-error", Static).render())
        assert "choose an endpoint" in error and "Select.NULL" not in error
        assert form.query_one("#run-name", Input).value == "keep me"
        assert form.query_one("#bench", Select).value == "mme"


async def test_a_run_is_launched_with_the_keyboard_alone(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """The form opens on its first field, so Enter opens the benchmark list at once."""
    with session_scope(engine, "tester") as s:
        for name in ("alpha", "beta"):
            authoring.ensure_benchmark(s, name, "chainmark", tool_set="agentic-mme")
            authoring.create_task(s, name, "What colour?", answer_spec={"kind": "contains", "value": "red"})
        add_endpoint(s, "one", "http://127.0.0.1:9/v1", "m")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(LaunchScreen())
        await settle(pilot, app)
        form = app.screen
        assert app.focused is form.query_one("#bench", Select)
        await pilot.press("enter", "down", "down", "enter")
        await settle(pilot, app)
        assert form.query_one("#bench", Select).value == "beta"
        assert str(form.query_one("#bench #label", Static).render()) == "beta  (1 task, tools agentic-mme)"


def test_a_judge_report_being_rated_shows_the_report() -> None:
    report = "Precision inspector\nsupported claims: 3 of 4\nthe second step is not backed by the documents"
    content = {
        "verdict": {
            "id": 9,
            "judge": "atp-precision",
            "label": None,
            "score": None,
            "rationale": "ok",
            "parsed": {"supported": 3, "total": 4},
            "raw_output": report,
        }
    }
    text = content_text(content).plain
    assert report in text and "label None" not in text and "score None" not in text
    parsed_only = content_text({"verdict": {**content["verdict"], "raw_output": None}}).plain
    assert '"supported": 3' in parsed_only


async def test_the_run_monitor_shows_every_run_state_whole(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """The status column was 9 cells: a run being cancelled read 'cancellin'."""
    from textual.widgets import DataTable

    from tui.screens.runs.monitor import RunMonitorScreen

    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        table = app.screen.query_one("#runs-table", DataTable)
        status = next(c for c in table.columns.values() if str(c.label) == "status")
        states = ("starting", "running", "cancelling", "finished", "pending", "queued", "cancelled", "failed")
        assert status.width >= max(map(len, states))


async def test_the_reports_run_list_shows_a_cancelled_run_whole(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """The reports screen's status column was 8 cells: 'cancelle'."""
    from textual.widgets import DataTable

    from tui.screens.reports import ReportsScreen

    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(ReportsScreen(embedder="hashing"))
        await settle(pilot, app)
        table = app.screen.query_one("#report-runs", DataTable)
        status = next(c for c in table.columns.values() if str(c.label) == "status")
        assert status.width >= len("cancelled")
