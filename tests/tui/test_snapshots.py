"""One snapshot per screen at a fixed size, with half-cell images, fixed data and fixed timestamps.

Plain ``def`` tests: ``snap_compare`` runs its own event loop. Update baselines with
``pytest tests/tui --snapshot-update`` after checking ``snapshot_report.html``.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlmodel import update

from annotation import tasks as authoring
from store import session_scope
from store.models import AuditEvent
from tests.tui.conftest import png, settle
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.checkpoint_editor import CheckpointEditorScreen
from tui.screens.help import HelpScreen
from tui.screens.task_list import TaskListScreen
from tests.support.must import must

SIZE = (140, 44)
FIXED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture
def snapshot_db(engine, blobs):  # type: ignore[no-untyped-def]
    with session_scope(engine, "annotator") as s:
        authoring.ensure_benchmark(
            s,
            "mme",
            "agentic-mme",
            tool_set="agentic-mme",
            guidelines="# Checkpoint rules\n\n- One V checkpoint per visual step.",
        )
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        for i in range(30):
            authoring.create_task(
                s,
                "gta" if i % 2 else "mme",
                f"Sample question {i}: how many cups are on the table?",
                category="perception",
                level=f"L{i % 3 + 1}",
                source_id=f"s-{i:03d}",
            )
        t = authoring.create_task(
            s,
            "mme",
            "What is written on the white card?",
            source_id="card",
            answer_spec={"kind": "exact", "value": "OPEN"},
            category="ocr",
            level="L2",
        )
        authoring.attach_asset(s, blobs, must(t.id), png(320, 200, text="OPEN"))
        step = authoring.add_step(
            s,
            must(t.id),
            thought="zoom on the card",
            tool_name="crop",
            tool_args={"image_index": 0, "bbox_2d": [250, 250, 500, 500]},
            result_text="cropped",
        )
        authoring.attach_asset(s, blobs, must(t.id), png(80, 50, colour="#ffffff"), role="artifact", step_id=step.id)
        authoring.add_checkpoint(
            s,
            must(t.id),
            "cp1",
            axis="V",
            step_id=step.id,
            tools=["crop"],
            visual_check={"question": "Is the card visible?", "expected_answer": "yes"},
        )
        task_id = t.id
    with session_scope(engine) as s:
        s.exec(update(AuditEvent).values(created_at=FIXED))
    return task_id


def _run_before(screen_factory):  # type: ignore[no-untyped-def]
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot, pilot.app)
        if screen_factory is not None:
            await pilot.app.push_screen(screen_factory(pilot.app))
        await settle(pilot, pilot.app)
        await pilot.pause(0.2)
        await settle(pilot, pilot.app)

    return run_before


def test_home(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_tui(), terminal_size=SIZE, run_before=_run_before(None))


def test_task_list(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_tui(), terminal_size=SIZE, run_before=_run_before(lambda app: TaskListScreen("mme")))


def test_task_editor(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_tui(start_task=snapshot_db), terminal_size=SIZE, run_before=_run_before(None))


def test_chain_builder(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_tui(), terminal_size=SIZE, run_before=_run_before(lambda app: ChainBuilderScreen(snapshot_db))
    )


def test_checkpoint_editor(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_tui(), terminal_size=SIZE, run_before=_run_before(lambda app: CheckpointEditorScreen(snapshot_db))
    )


def test_help(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_tui(), terminal_size=SIZE, run_before=_run_before(lambda app: HelpScreen(app.screen)))


def test_region_picker(snap_compare, make_tui, snapshot_db) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await _run_before(lambda app: ChainBuilderScreen(snapshot_db))(pilot)
        await pilot.press("ctrl+l", "right", "down", "shift+right")
        await settle(pilot, pilot.app)

    assert snap_compare(make_tui(), terminal_size=SIZE, run_before=run_before)


SMALL = (80, 24)
AUTHORING_SCREENS = {
    "task_list": lambda task_id: lambda app: TaskListScreen("mme"),
    "task_editor": lambda task_id: None,
    "new_task": lambda task_id: lambda app: _new_task(),
    "chain_builder": lambda task_id: lambda app: ChainBuilderScreen(task_id),
    "checkpoint_editor": lambda task_id: lambda app: CheckpointEditorScreen(task_id),
    "drafting": lambda task_id: lambda app: _drafting(task_id),
    "guidelines": lambda task_id: lambda app: _guidelines(),
}


def _new_task():  # type: ignore[no-untyped-def]
    from tui.screens.new_task import NewTaskScreen

    return NewTaskScreen("mme")


def _drafting(task_id: int):  # type: ignore[no-untyped-def]
    from tui.screens.drafting import DraftingScreen

    return DraftingScreen(task_id)


def _guidelines():  # type: ignore[no-untyped-def]
    from tui.screens.guidelines import GuidelinesScreen

    return GuidelinesScreen("mme", "# Checkpoint rules\n\n- One V checkpoint per visual step.")


@pytest.mark.parametrize("name", list(AUTHORING_SCREENS))
def test_authoring_screen_at_80x24(snap_compare, make_tui, snapshot_db, name) -> None:  # type: ignore[no-untyped-def]
    """Every authoring screen at the smallest supported terminal: panels stack, nothing is cut to nothing."""
    factory = AUTHORING_SCREENS[name](snapshot_db)
    app = make_tui(start_task=snapshot_db) if name == "task_editor" else make_tui()
    assert snap_compare(app, terminal_size=SMALL, run_before=_run_before(factory))
