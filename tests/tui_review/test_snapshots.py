"""One snapshot per run/review screen at a fixed size, with half-cell images and fixed data.

Plain ``def`` tests: ``snap_compare`` runs its own event loop. Update baselines with
``pytest tests/tui_review --snapshot-update`` after checking ``snapshot_report.html``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evaluation.harness import add_endpoint
from store import session_scope
from tests.tui_review.conftest import rate_as, settle
from tui.screens.reports import ReportsScreen
from tui.screens.review.adjudication import AdjudicationScreen
from tui.screens.review.dashboard import DashboardScreen
from tui.screens.review.rating_queue import RatingQueueScreen
from tui.screens.runs.launcher import LaunchScreen
from tui.screens.runs.monitor import RunMonitorScreen
from tui.screens.runs.trajectory import TrajectoryScreen

SIZE = (140, 44)
ANN = ["yes", "no", "yes", "yes", "no"]
BOB = ["yes", "yes", "no", "no", "no"]


def _run_before(factory: Callable[[Any], Any], *keys: str) -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        await settle(pilot, pilot.app)
        await pilot.app.push_screen(factory(pilot.app))
        await settle(pilot, pilot.app)
        if keys:
            await pilot.press(*keys)
            await settle(pilot, pilot.app)
        await pilot.pause(0.2)
        await settle(pilot, pilot.app)
        # A toast lives 2 s: whether it is still up depends on the machine's speed, not the screen.
        pilot.app.clear_notifications()
        await settle(pilot, pilot.app)

    return run_before


@pytest.fixture
def rated(engine, study):  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ANN, study["trajectories"])
    rate_as(engine, "bob", BOB, study["trajectories"])
    return study


def test_rating_queue_blind(snap_compare, make_tui, study) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_tui(actor="ann"), terminal_size=SIZE, run_before=_run_before(lambda app: RatingQueueScreen())
    )


def test_rating_queue_after_rating(snap_compare, make_tui, study) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_tui(actor="ann"), terminal_size=SIZE, run_before=_run_before(lambda app: RatingQueueScreen(), "n")
    )


def test_adjudication(snap_compare, make_tui, rated) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_tui(actor="rev"), terminal_size=SIZE, run_before=_run_before(lambda app: AdjudicationScreen())
    )


def test_dashboard(snap_compare, make_tui, rated) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_tui(actor="rev"),
        terminal_size=SIZE,
        run_before=_run_before(lambda app: DashboardScreen(scale="yes-no", resamples=200)),
    )


def test_trajectory(snap_compare, make_tui, rated) -> None:  # type: ignore[no-untyped-def]
    first = rated["trajectories"][0]
    assert snap_compare(make_tui(), terminal_size=SIZE, run_before=_run_before(lambda app: TrajectoryScreen(first)))


def test_run_monitor(snap_compare, make_tui, study) -> None:  # type: ignore[no-untyped-def]
    # as a reviewer: ann owes blind ratings on the study's run, so her monitor hides its name (test_blind_surfaces)
    assert snap_compare(
        make_tui(actor="rev"), terminal_size=SIZE, run_before=_run_before(lambda app: RunMonitorScreen())
    )


def test_launcher(snap_compare, make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "local", "http://127.0.0.1:9/v1", "some-model")
    assert snap_compare(make_tui(), terminal_size=SIZE, run_before=_run_before(lambda app: LaunchScreen("demo-gta")))


def test_reports(snap_compare, make_tui, study) -> None:  # type: ignore[no-untyped-def]
    run = study["run"]
    assert snap_compare(
        make_tui(actor="rev"),  # ann owes blind ratings on this run: her report leaves it out
        terminal_size=SIZE,
        run_before=_run_before(lambda app: ReportsScreen((run,), embedder="hashing")),
    )


def test_trajectory_transcript(snap_compare, make_tui, transcript) -> None:  # type: ignore[no-untyped-def]
    """Code highlighted with its newlines, a long output collapsed, timing, a search with its matches."""
    tid = transcript["trajectory"]
    assert snap_compare(
        make_tui(),
        terminal_size=(160, 48),
        run_before=_run_before(lambda app: TrajectoryScreen(tid), "slash", *"sympy", "enter"),
    )
