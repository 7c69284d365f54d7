"""Trajectory viewer: reference and model steps aligned, checkpoint marks on the matched rows."""

from __future__ import annotations

from store import session_scope
from tests.tui.test_authoring_forms import until
from tests.tui_review.conftest import rate_as, settle
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.runs.trajectory_data import trajectory_view
from tui.widgets.review.trajectory_row import TrajectoryRow
from tests.support.must import must


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
        ("judge-a", "yes (1)", False),
        ("judge-b", "yes (1)", False),
        ("ann (yes-no)", "yes", True),
    }
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
        must(s.get(Trajectory, tid)).usage = {
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
            "api_calls": 2,
        }
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
        head = app.screen.query_one("#traj-head")
        assert "edited after this run" in str(head.render())
        app.screen.action_sibling(1)
        sibling = app.screen.trajectory_id
        assert sibling != study["trajectories"][0]
        # the sibling's header, once it is shown (a condition, not a pause: a busy machine may be slow)
        await until(pilot, lambda: f"Trajectory {sibling} " in str(head.render()))
        assert "edited after this run" not in str(head.render())


async def test_thumbnails_that_arrive_before_a_row_has_composed_wait_for_it() -> None:
    """Thumbnails can land while a freshly mounted row has not composed its parts yet (moving to a
    sibling trajectory under load): they are added once it has, instead of crashing the app."""
    from PIL import Image
    from textual.app import App
    from textual_image.widget import HalfcellImage

    from tui.screens.runs.trajectory_data import Row, Step
    from tui.widgets.review.trajectory_row import TrajectoryRow

    step = Step("model", "crop", "", "crop(...)", "ok", asset_ids=(7,))
    thumb = Image.new("RGB", (16, 16), "red")

    class Host(App[None]):
        pass

    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        row = TrajectoryRow(Row(None, step), 0)
        app.screen.mount(row)  # not awaited: its children are not there yet
        row.add_images({7: thumb}, HalfcellImage)
        await pilot.pause()
        await pilot.pause()
        assert len(row.query(".model .thumbs").first().children) == 1
