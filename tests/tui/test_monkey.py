"""A randomized "monkey" over every screen (issue 16, how we know): key sequences drawn
from each screen's own bindings plus typing, arrows, tab and enter. The app must stay alive and the
database must pass its integrity checks. A failure shrinks to a replayable key list (hypothesis
prints it). Kept to a few short examples per screen so it fits in CI."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from annotation import tasks as authoring
from store import session_scope
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tests.tui.conftest import png, settle
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.checkpoint_editor import CheckpointEditorScreen
from tui.screens.task_editor import TaskEditorScreen
from tests.support.must import must


def _screens() -> dict[str, Any]:
    """Every screen, built from the ids the walk's data has (task, runs, trajectory)."""
    from tui.screens.drafting import DraftingScreen
    from tui.screens.guidelines import GuidelinesScreen
    from tui.screens.home import HomeScreen
    from tui.screens.new_task import NewTaskScreen
    from tui.screens.reports import ReportsScreen
    from tui.screens.rubric import RubricScreen
    from tui.screens.review.adjudication import AdjudicationScreen
    from tui.screens.review.dashboard import DashboardScreen
    from tui.screens.image_zoom import ImageZoomScreen
    from tui.screens.region_picker import RegionPickerScreen
    from tui.screens.review.preference_queue import PreferenceQueueScreen
    from tui.screens.review.rating_queue import RatingQueueScreen
    from tui.screens.runs.compare import CompareScreen
    from tui.screens.runs.launcher import LaunchScreen
    from tui.screens.runs.monitor import RunMonitorScreen
    from tui.screens.runs.trajectory import TrajectoryScreen
    from tui.screens.task_list import TaskListScreen

    return {  # name: (class, how to build it from the walk's ids)
        "task editor": (TaskEditorScreen, lambda d: TaskEditorScreen(d["task"])),
        "chain builder": (ChainBuilderScreen, lambda d: ChainBuilderScreen(d["task"])),
        "checkpoint editor": (CheckpointEditorScreen, lambda d: CheckpointEditorScreen(d["task"])),
        "home": (HomeScreen, lambda d: HomeScreen()),
        "task list": (TaskListScreen, lambda d: TaskListScreen()),
        "new task": (NewTaskScreen, lambda d: NewTaskScreen("mme")),
        "drafting": (DraftingScreen, lambda d: DraftingScreen(d["task"])),
        "guidelines": (GuidelinesScreen, lambda d: GuidelinesScreen("mme", "# Rules")),
        "rubric": (RubricScreen, lambda d: RubricScreen("mme")),
        "runs": (RunMonitorScreen, lambda d: RunMonitorScreen()),
        "launcher": (LaunchScreen, lambda d: LaunchScreen("mme")),
        "trajectory": (TrajectoryScreen, lambda d: TrajectoryScreen(d["trajectory"])),
        "compare": (CompareScreen, lambda d: CompareScreen(d["runs"], embedder="hashing")),
        "reports": (ReportsScreen, lambda d: ReportsScreen(tuple(d["runs"]), embedder="hashing")),
        "rating queue": (RatingQueueScreen, lambda d: RatingQueueScreen("tester")),
        "adjudication": (AdjudicationScreen, lambda d: AdjudicationScreen("tester")),
        "dashboard": (DashboardScreen, lambda d: DashboardScreen()),
        "preference queue": (PreferenceQueueScreen, lambda d: PreferenceQueueScreen("tester")),
        "image zoom": (ImageZoomScreen, lambda d: ImageZoomScreen(png(120, 80), "query image")),
        "region picker": (RegionPickerScreen, lambda d: RegionPickerScreen(_image())),
    }


def _image():  # type: ignore[no-untyped-def]
    import io

    from PIL import Image

    return Image.open(io.BytesIO(png(120, 80))).convert("RGB")


SCREENS = _screens()
HOSTILE = "[/x] [@click=app.quit]q[/] \x1b[2J"
NEVER = {"ctrl+q", "ctrl+c", "ctrl+p", "question_mark"}  # quitting and the palette/help end the walk
COMMON = [
    "tab",
    "shift+tab",
    "up",
    "down",
    "left",
    "right",
    "enter",
    "escape",
    "delete",
    "backspace",
    "space",
    "a",
    "1",
    "[",
    "V",
    "]",
    "ctrl+z",
]


def _keys(screen_class: type) -> list[str]:
    from textual.binding import Binding

    keys = set(COMMON)
    for klass in screen_class.__mro__:
        for raw in klass.__dict__.get("BINDINGS", []) or []:
            b = raw if isinstance(raw, Binding) else Binding(*raw)
            keys.update(k.strip() for k in b.key.split(","))
    return sorted(keys - NEVER)


async def _walk(make_tui, engine, blobs, screen_name: str, keys: list[str]) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        # names from data that look like markup or carry escapes: every list, drop-down and field shows them
        authoring.ensure_benchmark(s, HOSTILE, "chainmark")
        t = authoring.create_task(s, "mme", "What colour is the square?", category=HOSTILE, level=HOSTILE)
        authoring.attach_asset(s, blobs, must(t.id), png(120, 80))
        step = authoring.add_step(
            s, must(t.id), tool_name="crop", tool_args={"image_index": 0, "bbox_2d": [0, 0, 500, 500]}, result_text="ok"
        )
        authoring.add_checkpoint(s, must(t.id), "cp1", axis="V", step_id=step.id)
        ids: dict[str, Any] = {"task": t.id}
        runs = [stored_run(s, "mme", "agentic-mme", mode="atomic", model=m) for m in ("alpha", "beta")]
        trajectories = [stored_trajectory(s, r, int(t.id or 0), [answer(a)]) for r, a in zip(runs, ("red", "blue"))]
        ids.update(runs=[r.id for r in runs], trajectory=trajectories[0].id)
        from annotation.review.annotators import add_annotator
        from annotation.review.preferences import assign_pairs

        add_annotator(s, "tester")
        assign_pairs(s, int(runs[0].id or 0), int(runs[1].id or 0), ["tester"], 1)
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(SCREENS[screen_name][1](ids))
        await pilot.pause()
        if app.is_running:  # a screen that crashes as it loads must fail the walk, not hang it
            await settle(pilot, app)
        for key in keys:
            if not app.is_running:
                break
            await pilot.press(key)
            await pilot.pause()
        if app.is_running:
            await settle(pilot, app)
        assert app.is_running, keys
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        assert conn.execute(text("PRAGMA foreign_key_check")).fetchall() == []


@pytest.mark.parametrize("screen_name", list(SCREENS))
def test_monkey_never_kills_the_app(make_tui, engine, blobs, screen_name: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)  # random keys can export a report to a relative path

    @settings(
        max_examples=2,
        deadline=None,
        derandomize=True,
        # No "explain" phase: it re-runs a failing walk under a line tracer, and a crashed app's traceback
        # (Rich, with locals) then takes minutes to render: the walk looked hung instead of failing.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(st.sampled_from(_keys(SCREENS[screen_name][0])), min_size=10, max_size=40))
    def run(keys: list[str]) -> None:
        asyncio.run(_walk(make_tui, engine, blobs, screen_name, keys))

    run()
