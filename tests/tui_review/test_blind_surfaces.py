"""Blind mode on every TUI screen (issue 32), the screens read from ``tui.screens`` itself: each is
checked for erin's scenario (runs 1 vs 17, trajectory 1) or exempt by name with the reason. ``serve``
runs this same app as each login (``--as NAME``), so what holds here holds there.

erin (blind work pending) sees no model or endpoint name, judge verdict or score of runs 1 and 17,
and each screen that withholds them says why; the open reviewer, and erin once finished, see them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from textual.screen import Screen
from textual.widgets import DataTable, Static

import tui.screens
from tests.support.blind_scenario import RUN_GOOD, RUN_MID, SECRETS, Scenario, finish_erin, seed_blind_scenario
from tests.tui_review.conftest import drawn, settle
from tui.commands.serve import serve_command
from tui.context import AppContext
from tui.screens.reports import ReportsScreen
from tui.screens.review.dashboard import DashboardScreen
from tui.screens.review.estimates import EstimatesScreen
from tui.screens.runs.compare import CompareScreen
from tui.screens.runs.monitor import RunMonitorScreen
from tui.screens.runs.trajectory import TrajectoryScreen

# screen class -> how to open it on the scenario, and whether an open viewer sees a model name there
SURFACES: dict[str, tuple[Callable[[Scenario], Screen[Any]], bool]] = {
    "CompareScreen": (lambda sc: CompareScreen([RUN_MID, RUN_GOOD]), True),
    "SideBySideScreen": (lambda sc: CompareScreen([RUN_MID, RUN_GOOD]), True),  # enter on the compare screen
    "RunMonitorScreen": (lambda sc: RunMonitorScreen(), True),
    "ReportsScreen": (lambda sc: ReportsScreen((RUN_MID, RUN_GOOD)), True),
    "TrajectoryScreen": (lambda sc: TrajectoryScreen(sc.trajectory_1), True),
    "DashboardScreen": (lambda sc: DashboardScreen(), True),
    # refused whole to a blind rater: its intervals hold every rating (no model name for anyone)
    "EstimatesScreen": (lambda sc: EstimatesScreen(RUN_MID, "judge-x", "yes-no"), False),
}

EXEMPT = {
    "HomeScreen": "menu and counts of work, no runs",
    "TaskListScreen": "tasks only",
    "TaskEditorScreen": "authoring: a task and its reference chain",
    "NewTaskScreen": "authoring",
    "NewBenchmarkScreen": "authoring: a form for a benchmark's name, format, tool set and guidelines",
    "ChainBuilderScreen": "authoring and the person's own blind attempt",
    "CheckpointEditorScreen": "authoring",
    "DraftingScreen": "authoring",
    "GuidelinesScreen": "the benchmark's guidelines",
    "RubricScreen": "the benchmark's judge rubric text and its versions: no run, model or verdict",
    "LaunchScreen": "the person names the endpoint to run",
    "RatingQueueScreen": "the blind rating view itself (rating_view; tests/tui_review/test_rating_queue.py)",
    "PreferenceQueueScreen": "the blind pair view itself (names masked; test_preference_queue.py)",
    "AdjudicationScreen": "held back by blind_scope (test_blind_everywhere.py)",
    "RawEventsScreen": "one step's stored events",
    "ImageZoomScreen": "an image",
    "RegionPickerScreen": "an image",
    "ConfirmDiscardScreen": "a question",
    "ConflictScreen": "an edit conflict",
    "MergeScreen": "an edit conflict",
    "PromptScreen": "a question",
    "HelpScreen": "key help",
}


BASES = {"WorkScreen", "OneAnswerModal"}


def screen_classes() -> list[str]:
    """Every screen class defined under ``tui.screens`` (the bases other screens build on are not ones to open)."""
    found: set[str] = set()
    for info in pkgutil.walk_packages(tui.screens.__path__, tui.screens.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__ == module.__name__ and name not in BASES:
                found.add(name)
    return sorted(found)


def test_every_screen_is_a_checked_surface_or_exempt_by_name() -> None:
    screens = set(screen_classes())
    assert not set(SURFACES) & set(EXEMPT)
    assert screens - set(SURFACES) - set(EXEMPT) == set(), "a new screen: add it to SURFACES or EXEMPT"
    assert set(SURFACES) | set(EXEMPT) <= screens


def screen_text(screen: Screen[Any]) -> str:
    """Everything the screen holds as text: its Statics and every header and cell of its tables."""
    parts = [str(screen.app.title), str(screen.app.sub_title)]
    for w in screen.query(Static):
        parts += [str(w.render()), drawn(w)]  # drawn: a Rich renderable (the report) shows as drawn
    for t in screen.query(DataTable):
        parts += [str(c.label) for c in t.columns.values()]
        parts += [str(cell) for i in range(t.row_count) for cell in t.get_row_at(i)]
    return "\n".join(parts)


async def shown_to(make_tui: Any, who: str, sc: Scenario, name: str) -> str:
    open_screen, _ = SURFACES[name]
    app = make_tui(actor=who)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(open_screen(sc))
        await settle(pilot, app)
        if name == "SideBySideScreen":
            await pilot.press("enter")
            await settle(pilot, app)
            assert type(app.screen).__name__ == name
        return screen_text(app.screen)


@pytest.fixture
def scenario(engine: Engine) -> Scenario:
    return seed_blind_scenario(engine)


@pytest.mark.parametrize("name", list(SURFACES))
async def test_a_blind_rater_sees_no_model_verdict_or_score(make_tui: Any, scenario: Scenario, name: str) -> None:
    text = await shown_to(make_tui, "erin", scenario, name)
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, f"{name} shows {leaked} to erin:\n{text}"
    assert "✓" not in text or name != "CompareScreen", text  # no per-task right/wrong marks
    assert "erin has" in text or "erin still has" in text or "hidden" in text, text


@pytest.mark.parametrize("name", [n for n, (_, reveals) in SURFACES.items() if reveals and n != "DashboardScreen"])
async def test_an_open_reviewer_and_erin_after_finishing_see_the_models(
    make_tui: Any, engine: Engine, scenario: Scenario, name: str
) -> None:
    for who in ("rev", "erin"):
        if who == "erin":
            finish_erin(engine, scenario)
        text = await shown_to(make_tui, who, scenario, name)
        assert any(m in text for m in ("gpt-mid", "gpt-good", "ep-mid", "ep-good")), f"{who}: {text}"
        assert "pending on run" not in text


def test_serve_runs_each_login_as_that_person(tmp_path: Any) -> None:
    """Every browser session of ``serve`` is this TUI started ``--as`` the login, so blind mode follows."""
    command = serve_command(AppContext(db=str(tmp_path / "c.db")), user="erin")
    assert command.split()[-2:] == ["--as", "erin"]
