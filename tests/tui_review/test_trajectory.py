"""Trajectory viewer: reference and model steps aligned, checkpoint marks on the matched rows."""

from __future__ import annotations

from store import session_scope
from tests.tui_review.conftest import rate_as, settle
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.runs.trajectory_data import trajectory_view
from tui.widgets.review.trajectory_row import TrajectoryRow


def test_alignment_and_marks(engine, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ["yes"], study["trajectories"][:1])
    with session_scope(engine) as s:
        view = trajectory_view(s, study["trajectories"][0])
    names = [((r.ref.name if r.ref else None), (r.model.name if r.model else None)) for r in view.rows]
    # OCR pairs with OCR (anchored by checkpoint cp1), the model skipped CountGivenObject, answers pair up
    assert names == [("OCR", "OCR"), ("CountGivenObject", None), ("answer", "answer")]
    ocr = view.rows[0]
    assert ocr.model is not None and ocr.model.thought == "I will read the label." and ocr.model.result == "TABLE 1"
    assert len(ocr.model.asset_ids) == 1 and ocr.model.asset_ids[0] in view.images
    assert [(m.key, m.passed) for m in ocr.marks] == [("cp1", True)]
    assert [(m.key, m.passed) for m in view.rows[1].marks] == [("cp2", False)]  # unmatched: on its reference step
    assert [(j.who, j.value) for j in ocr.judgements] == [("judge-a", "faithful")]  # event verdict beside the step
    assert {(j.who, j.value, j.human) for j in view.judgements} == {
        ("judge-a", "yes (1)", False), ("judge-b", "yes (1)", False), ("ann (yes-no)", "yes", True)}
    assert (view.passed, view.checkpoints) == (1, 2)


async def test_open_trajectory_and_walk_the_run(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(study["trajectories"][1]))
        await settle(pilot, app)
        screen = app.screen
        rows = list(screen.query(TrajectoryRow))
        assert len(rows) == 3
        marks = str(rows[0].query_one(".marks").render())
        assert "✗" in marks and "cp1" in marks  # trajectory 2 failed cp1 (odd ones fail)
        assert rows[0].query(".model .thumbs > *")  # the OCR output image is shown inline
        assert "checkpoints 0/2" in str(screen.query_one("#traj-head").render())
        await pilot.press("down", "down")
        assert screen.cursor == 2 and rows[2].has_class("-cursor")
        await pilot.press("right_square_bracket")
        await settle(pilot, app)
        assert screen.view is not None and screen.view.id == study["trajectories"][2]
        assert "checkpoints 1/2" in str(screen.query_one("#traj-head").render())


async def test_header_counts_tokens_once(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    from store.models import Trajectory

    tid = study["trajectories"][0]
    with session_scope(engine) as s:
        s.get(Trajectory, tid).usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                                        "api_calls": 2}
    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(tid))
        await settle(pilot, app)
        head = str(app.screen.query_one("#traj-head").render())
        assert "120 tokens" in head and "240" not in head


async def test_header_says_the_task_was_edited_after_the_run(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    from annotation import tasks as authoring

    with session_scope(engine, "editor") as s:
        authoring.edit_task(s, study["tasks"][0], query="How many mugs are on table 1?")
    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(study["trajectories"][0]))
        await settle(pilot, app)
        assert "edited after this run" in str(app.screen.query_one("#traj-head").render())
        app.screen.action_sibling(1)
        await settle(pilot, app)
        assert "edited after this run" not in str(app.screen.query_one("#traj-head").render())
