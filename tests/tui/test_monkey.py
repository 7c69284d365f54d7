"""The monkey on every screen (issues 16 and 32, how we know): each screen the app can show, the command
palette too, is opened on the demo project and walked with a seeded random sequence of keys (its own
bindings, moves, typing, enter/escape, the palette with typing in it; quitting only at the end), at
80×24 and 160×48 (the terminal is resized half-way). The app must not crash, must not show an internal
error, must still run unless the walk quit it, and must leave the database consistent.

The list of screens is every ``Screen`` subclass in ``tui/screens`` (found by walking the package), so a
new screen without a way to open it here fails ``test_every_screen_has_a_walk``. A failing walk is
replayed by its test id (screen, seed); ``CHAINMARK_MONKEY_SEEDS=N`` walks N seeds per screen (default 1).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen
from textual_image.widget import HalfcellImage

import tui.screens
from store import make_engine
from tests.support.monkey import (
    SIZES,
    Project,
    build_project,
    consistency_problems,
    monkey_keys,
    press_burst,
    record_hidden_errors,
    screen_keys,
    unaudited,
    watch_quit,
)
from tests.tui.conftest import png, settle
from tui.app import ChainmarkApp, make_app
from tui.context import AppContext

pytestmark = pytest.mark.renders  # a widget that fails to draw is what these walks hunt

SEEDS = int(os.environ.get("CHAINMARK_MONKEY_SEEDS", "1"))
KEYS_PER_WALK = 16
PALETTE = "GuardedCommandPalette"  # not under tui/screens: the palette ctrl+p opens everywhere
ABSTRACT = {"WorkScreen", "OneAnswerModal"}  # bases other screens build on, never shown by themselves

Build = Callable[[dict[str, Any], ChainmarkApp], list[Screen[Any]]]


def screen_classes() -> dict[str, type[Screen[Any]]]:
    """Every screen class defined under ``tui/screens``, by class name."""
    found: dict[str, type[Screen[Any]]] = {}
    for module_info in pkgutil.walk_packages(tui.screens.__path__, "tui.screens."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Screen) and value.__module__ == module.__name__:
                found[name] = value
    return {name: cls for name, cls in found.items() if name not in ABSTRACT}


# How to open each screen on the project: a list of screens pushed in order over home (the dialogs too: over
# home they cost a walk less than over the task editor that asks them, and answer nobody). Keyed by class
# name so a renamed or new screen shows up as uncovered.
def _builds() -> dict[str, Build]:
    from tui.screens.chain_builder import ChainBuilderScreen
    from tui.screens.checkpoint_editor import CheckpointEditorScreen
    from tui.screens.confirm import ConfirmDiscardScreen
    from tui.screens.conflict import ConflictScreen
    from tui.screens.drafting import DraftingScreen
    from tui.screens.guidelines import GuidelinesScreen
    from tui.screens.help import HelpScreen
    from tui.screens.home import HomeScreen
    from tui.screens.image_zoom import ImageZoomScreen
    from tui.screens.merge import MergeScreen
    from tui.screens.new_benchmark import NewBenchmarkScreen
    from tui.screens.new_task import NewTaskScreen
    from tui.screens.prompt import PromptScreen
    from tui.screens.region_picker import RegionPickerScreen
    from tui.screens.reports import ReportsScreen
    from tui.screens.review.adjudication import AdjudicationScreen
    from tui.screens.review.dashboard import DashboardScreen
    from tui.screens.review.estimates import EstimatesScreen
    from tui.screens.review.preference_queue import PreferenceQueueScreen
    from tui.screens.review.rating_queue import RatingQueueScreen
    from tui.screens.rubric import RubricScreen
    from tui.screens.runs.compare import CompareScreen, SideBySideScreen
    from tui.screens.runs.launcher import LaunchScreen
    from tui.screens.runs.monitor import RunMonitorScreen
    from tui.screens.runs.trajectory import TrajectoryScreen
    from tui.screens.task_editor import TaskEditorScreen
    from tui.screens.task_list import TaskListScreen

    def editor(d: dict[str, Any]) -> TaskEditorScreen:
        return TaskEditorScreen(d["tasks"][0])

    return {
        "HomeScreen": lambda d, app: [HomeScreen()],
        "TaskListScreen": lambda d, app: [TaskListScreen()],
        "NewTaskScreen": lambda d, app: [NewTaskScreen("demo-gta")],
        "NewBenchmarkScreen": lambda d, app: [NewBenchmarkScreen()],
        "TaskEditorScreen": lambda d, app: [editor(d)],
        "ChainBuilderScreen": lambda d, app: [ChainBuilderScreen(d["tasks"][0])],
        "CheckpointEditorScreen": lambda d, app: [CheckpointEditorScreen(d["tasks"][0])],
        "DraftingScreen": lambda d, app: [DraftingScreen(d["tasks"][1])],
        "GuidelinesScreen": lambda d, app: [GuidelinesScreen("demo-gta", "# Rules\n\nCount what you see.")],
        "RubricScreen": lambda d, app: [RubricScreen("demo-chainmark")],
        "RunMonitorScreen": lambda d, app: [RunMonitorScreen()],
        "LaunchScreen": lambda d, app: [LaunchScreen("demo-gta")],
        "TrajectoryScreen": lambda d, app: [TrajectoryScreen(d["trajectories"][0])],
        "RawEventsScreen": lambda d, app: [TrajectoryScreen(d["trajectories"][0]), _raw_events(d, app)],
        "CompareScreen": lambda d, app: [CompareScreen(d["runs"], embedder="hashing")],
        "SideBySideScreen": lambda d, app: [_side_by_side(d, SideBySideScreen)],
        "ReportsScreen": lambda d, app: [ReportsScreen(tuple(d["runs"]), embedder="hashing")],
        "RatingQueueScreen": lambda d, app: [RatingQueueScreen()],
        "PreferenceQueueScreen": lambda d, app: [PreferenceQueueScreen()],
        "AdjudicationScreen": lambda d, app: [AdjudicationScreen()],
        "DashboardScreen": lambda d, app: [DashboardScreen()],
        "EstimatesScreen": lambda d, app: [EstimatesScreen()],
        "ImageZoomScreen": lambda d, app: [ImageZoomScreen(png(120, 80), "query image")],
        "RegionPickerScreen": lambda d, app: [RegionPickerScreen(_image())],
        "HelpScreen": lambda d, app: [HelpScreen(app.screen)],
        "ConfirmDiscardScreen": lambda d, app: [ConfirmDiscardScreen("Not saved: the query. Leave?")],
        "ConflictScreen": lambda d, app: [ConflictScreen("query was changed by bob while you edited it")],
        "MergeScreen": lambda d, app: [MergeScreen("query", "How many?", "How many cups?", "How many mugs?", "bob")],
        "PromptScreen": lambda d, app: [PromptScreen("Why is it rejected?", placeholder="what to fix")],
    }


def _raw_events(d: dict[str, Any], app: ChainmarkApp) -> Screen[Any]:
    from sqlmodel import col, select

    from store.models import Event
    from tui.screens.runs.raw_events import RawEventsScreen
    from tui.screens.runs.step_details import raw_event

    def read(s: Any) -> tuple[Any, ...]:
        rows = s.exec(select(Event).where(Event.trajectory_id == d["trajectories"][0]).order_by(col(Event.ordinal)))
        return tuple(raw_event(e) for e in rows)

    return RawEventsScreen("Trajectory · row 1", app.read(read))


def _side_by_side(d: dict[str, Any], screen: Any) -> Screen[Any]:
    columns = [("scripted run", d["trajectories"][0], "2", 1.0), ("second run", None, "", None)]
    return screen(d["tasks"][0], columns, notes=[])  # type: ignore[no-any-return]


def _image() -> Any:
    import io

    from PIL import Image

    return Image.open(io.BytesIO(png(120, 80))).convert("RGB")


BUILDS = _builds()


def _open_palette(d: dict[str, Any], app: ChainmarkApp) -> list[Screen[Any]]:
    app.action_command_palette()  # the guarded palette over home (tui.widgets.command_palette)
    return []


WALKS: dict[str, tuple[Build, list[str]]] = {
    **{name: (build, screen_keys(cls)) for name, cls in screen_classes().items() if (build := BUILDS.get(name))},
    PALETTE: (_open_palette, []),
}


def walk_ids() -> Iterator[Any]:
    """Seed by seed, so a long run cut short has walked every screen as often."""
    for seed in range(SEEDS):
        for name in WALKS:
            yield pytest.param(name, seed, id=f"{name}-{seed}")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """Built once per module (the demo costs seconds), copied for each walk."""
    return build_project(tmp_path_factory.mktemp("monkey-project"))


def test_every_screen_has_a_walk() -> None:
    """A screen added to tui/screens without a way to open it here is not walked: fail until it is."""
    assert sorted(set(screen_classes()) - set(BUILDS)) == []
    assert sorted(set(BUILDS) - set(screen_classes())) == []  # and no walk of a screen that is gone


@pytest.mark.parametrize(("screen_name", "seed"), list(walk_ids()))
async def test_monkey_walk(
    project: Project, screen_name: str, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # random keys can export a report or a screenshot to a relative path
    db, _blobs = project.copy_to(tmp_path)
    engine = make_engine(db)
    rng = random.Random(f"{screen_name}:{seed}")
    build, own = WALKS[screen_name]
    keys = monkey_keys(rng, own, KEYS_PER_WALK)
    actor = rng.choice(("ann", "rev"))
    first, then = SIZES if seed % 2 == 0 else SIZES[::-1]
    hidden = record_hidden_errors(monkeypatch)
    quit_ = watch_quit(monkeypatch)
    from sqlmodel import Session

    with Session(engine) as s:
        before = unaudited(s)
    app = make_app(AppContext(db=str(db), actor=actor), image_widget=HalfcellImage, engine=engine)
    replay = f"walk {screen_name!r} seed {seed} as {actor} at {first} then {then}: keys {keys}"
    try:
        async with app.run_test(size=first) as pilot:
            await settle(pilot, app)
            for screen in build(project.ids, app):
                app.push_screen(screen)
            await settle(pilot, app)
            for n, burst in enumerate(keys):
                if not app.is_running:
                    break
                if n == len(keys) // 2:
                    await pilot.resize_terminal(*then)
                await press_burst(pilot, burst)
            if app.is_running:
                await settle(pilot, app)
            running = app.is_running
    except Exception as exc:
        exc.add_note(replay)
        raise
    finally:
        engine.dispose()
    engine = make_engine(db)
    try:
        assert app.return_code in (None, 0), replay
        assert hidden.bugs == [], f"{replay}\n" + "\n\n".join(hidden.bugs)
        assert running or quit_.asked, f"the app ended though nobody quit: {replay}"
        assert consistency_problems(engine, before) == [], replay
    finally:
        engine.dispose()
