"""Reviewing where the evidence is (issue 17): contradictions flagged on their rows and walked with
``x``, the run's own per-item score beside the gold answer, and step-mode ToolAcc/ArgAcc marks on
the gold steps the predictions were made for."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import select
from textual.widgets import Static

from annotation import tasks as authoring
from annotation.review.annotators import add_annotator
from annotation.review.assignments import assign
from annotation.review.targets import Target
from store import events as ev
from store import session_scope
from store.models import Checkpoint, CheckpointResult, Event, Run, Trajectory
from tests.tui_review.conftest import FIXED, drawn, rate_as, settle
from evaluation.agreement.contradicted import flag_key
from tui.screens.review.adjudication import AdjudicationScreen
from tui.screens.review.adjudication_data import QueueFilter, adjudication_item, disagreement_queue
from tui.screens.review.data import rating_item, rating_queue
from tui.screens.review.rating_queue import RatingQueueScreen
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.runs.trajectory_data import trajectory_view
from tui.widgets.review.trajectory_row import TrajectoryRow

SIZES = ((80, 24), (160, 48))


def marks(screen: Any, index: int) -> str:
    """The marks column of a row as drawn, padding included (``drawn`` stops at the content width)."""
    from textual.geometry import Region

    box = next(r for r in screen.query(TrajectoryRow) if r.index == index).query_one(".marks", Static)
    lines = box.render_lines(Region(0, 0, box.region.width, box.region.height))
    return "\n".join(strip.text.rstrip() for strip in lines)


def break_ocr_and_add_answer_checkpoint(engine: Engine, study: dict[str, Any]) -> int:
    """Trajectory 3 of the study (answer right, both judges say no, cp1 passed): its OCR call now
    failed, and a final-answer checkpoint failed though the answer is right."""
    tid = study["trajectories"][2]
    with session_scope(engine, "seed") as s:
        row = s.exec(select(Event).where(Event.trajectory_id == tid, Event.kind == ev.TOOL_RESULT)).one()
        row.payload = {**row.payload, "ok": False, "error": "OCR service unavailable"}
        row.failed = True
        traj = s.get(Trajectory, tid)
        assert traj is not None
        cp = Checkpoint(task_id=traj.task_id, key="final", axis="A", description="the count", answer_check={"x": 1})
        s.add(cp)
        s.flush()
        s.add(CheckpointResult(trajectory_id=tid, checkpoint_id=cp.id or 0, passed=False, created_at=FIXED))
    return tid


def test_contradictions_sit_on_their_rows(engine, study) -> None:  # type: ignore[no-untyped-def]
    tid = break_ocr_and_add_answer_checkpoint(engine, study)
    with session_scope(engine) as s:
        view = trajectory_view(s, tid, "rev")
    assert view.outcome is not None and view.outcome.right is True and view.gold == "exact: 4"
    found = {(at, c.who, c.text) for at, c in view.contradictions}
    assert found == {
        (0, "checkpoint cp1", "contradicts step: its tool call failed"),
        (2, "judge-a", "contradicts answer: scored right (1.00)"),
        (2, "judge-b", "contradicts answer: scored right (1.00)"),
        (2, "checkpoint final", "contradicts answer: scored right (1.00)"),
    }
    assert view.contradiction_rows == [0, 2]
    assert [c.who for c in view.rows[0].contradictions] == ["checkpoint cp1"]
    # a judge agreeing with the score is no contradiction
    with session_scope(engine) as s:
        agreeing = trajectory_view(s, study["trajectories"][0], "rev")
    assert agreeing.outcome is not None and agreeing.outcome.right and agreeing.contradictions == []
    with session_scope(engine) as s:
        wrong = trajectory_view(s, study["trajectories"][1], "rev")  # answered 4, gold 3; judge-b said yes
    assert [(at, c.who, c.text) for at, c in wrong.contradictions] == [
        (2, "judge-b", "contradicts answer: scored wrong (0.00)")
    ]


async def test_viewer_flags_contradictions_and_x_walks_them(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    tid = break_ocr_and_add_answer_checkpoint(engine, study)
    for size in SIZES:
        app = make_tui(actor="rev")
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            app.push_screen(TrajectoryScreen(tid))
            await settle(pilot, app)
            screen = app.screen
            head = drawn(screen.query_one("#traj-head"))
            assert "⚠ 4 contradictions (x)" in head
            task = drawn(screen.query_one("#traj-task"))
            assert "scored: right (1.00)" in task and "gold: exact: 4" in task
            assert "row 1: checkpoint cp1: contradicts step" in " ".join(task.split())
            assert "… 1 more (x walks the rows)" in task  # three listed, every one on its row
            flat = " ".join(marks(screen, 2).split())
            assert "⚠ judge-a: contradicts answer: scored right (1.00)" in flat
            rows = {r.index: r for r in screen.query(TrajectoryRow)}
            assert rows[0].has_class("-contradicts") and not rows[1].has_class("-contradicts")
            assert screen.cursor == 0
            await pilot.press("x")
            assert screen.cursor == 2 and rows[2].has_class("-cursor")
            await pilot.press("x")  # wraps to the first
            assert screen.cursor == 0
            await pilot.press("X")
            assert screen.cursor == 2


async def test_viewer_without_contradictions_says_so_on_x(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    app = make_tui(actor="rev")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(study["trajectories"][0]))
        await settle(pilot, app)
        screen = app.screen
        assert "contradiction" not in drawn(screen.query_one("#traj-head"))
        await pilot.press("x")
        await pilot.pause()
        assert screen.cursor == 0
        assert any("no contradictions" in str(n.message) for n in app._notifications)


async def test_blind_viewer_hides_the_score_and_contradictions(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    tid = study["trajectories"][1]  # ann still has to rate it blind
    with session_scope(engine) as s:
        view = trajectory_view(s, tid, "ann")
    assert view.outcome is None and view.contradictions == [] and "per-item score" in view.hidden
    app = make_tui(actor="ann")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(tid))
        await settle(pilot, app)
        screen = app.screen
        task = drawn(screen.query_one("#traj-task"))
        assert "scored: hidden until you rate (blind)" in task and "gold: exact: 3" in task
        assert "wrong" not in task and "contradict" not in drawn(screen.query_one("#traj-head"))


# ---------------------------------------------------------------- step mode


def seed_step_run(engine: Engine) -> dict[str, Any]:
    """A GTA step-by-step run: four gold turns (OCR, CountGivenObject, Calculator, answer) and one
    prediction per turn: the right call, a wrong tool, the right tool with wrong arguments, the answer."""
    with session_scope(engine, "seed") as s:
        bench = authoring.ensure_benchmark(s, "demo-step", "gta", tool_set="gta")
        task = authoring.create_task(s, bench, "How many cups, times two?", answer_spec={"kind": "exact", "value": "6"})
        gold = [
            ("OCR", {"image": "image_1"}),
            ("CountGivenObject", {"image": "image_1", "text": "cup"}),
            ("Calculator", {"expression": "3*2"}),
        ]
        for name, args in gold:
            authoring.add_step(s, task.id or 0, tool_name=name, tool_args=args, result_text="…")
        authoring.add_step(s, task.id or 0, final_answer="6")
        run = Run(name="step run", benchmark_id=bench.id or 0, mode="step", status="done", created_at=FIXED)
        s.add(run)
        s.flush()
        traj = Trajectory(
            run_id=run.id or 0, task_id=task.id or 0, task_revision=task.revision, status="done", final_answer="6"
        )
        s.add(traj)
        s.flush()

        def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            return {
                "role": "assistant",
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}],
            }

        predictions = [
            call("OCR", {"image": "image_1"}),
            call("OCR", {"image": "image_1"}),  # the wrong tool for gold turn 1
            call("Calculator", {"expression": "3+2"}),  # right tool, wrong arguments
            {"role": "assistant", "content": "6"},
        ]
        for k, pred in enumerate(predictions):
            s.add(
                Event(
                    trajectory_id=traj.id or 0,
                    ordinal=k,
                    kind=ev.STEP_PREDICTION,
                    payload={"gold_index": k, "prediction": pred},
                    started_at=FIXED,
                )
            )
    return {"trajectory": traj.id, "run": run.id}


def test_step_predictions_sit_on_their_gold_steps_with_the_scorers_marks(engine) -> None:  # type: ignore[no-untyped-def]
    tid = seed_step_run(engine)["trajectory"]
    with session_scope(engine) as s:
        view = trajectory_view(s, tid)
    pairs = [((r.ref.name if r.ref else None), (r.model.name if r.model else None)) for r in view.rows]
    # the second OCR prediction stays beside CountGivenObject, the turn it was asked for
    assert pairs == [("OCR", "OCR"), ("CountGivenObject", "OCR"), ("Calculator", "Calculator"), ("answer", "answer")]
    labels = [[m.label() for m in r.steps] for r in view.rows]
    assert labels == [
        ["ToolAcc ✓ ArgAcc ✓"],
        ["ToolAcc ✗ ArgAcc ✗"],
        ["ToolAcc ✓ ArgAcc ✗"],
        ["answer ✓"],
    ]
    assert view.outcome is not None and view.outcome.score == 1.0


async def test_step_marks_are_drawn(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    tid = seed_step_run(engine)["trajectory"]
    for size in SIZES:
        app = make_tui(actor="rev")
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            app.push_screen(TrajectoryScreen(tid))
            await settle(pilot, app)
            screen = app.screen
            drawn_marks = [" ".join(marks(screen, i).split()) for i in range(4)]
            assert "ToolAcc ✓ ArgAcc ✓" in drawn_marks[0]
            assert "ToolAcc ✗ ArgAcc ✗" in drawn_marks[1]
            assert "ToolAcc ✓ ArgAcc ✗" in drawn_marks[2]
            assert "answer ✓" in drawn_marks[3]


# ---------------------------------------------------------------- gold answer and score in the queues


def target_text(screen: Any, selector: str) -> str:
    return " ".join(drawn(screen.query_one(selector, Static)).split())


async def test_rating_queue_shows_gold_and_hides_the_score_until_rated(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    for size in SIZES:
        app = make_tui(actor="ann")
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            app.push_screen(RatingQueueScreen())
            await settle(pilot, app)
            screen = app.screen
            if size == SIZES[0]:
                text = target_text(screen, "#target-content")
                assert "Gold answer: exact: 2" in text  # task data: shown to a blind rater
                assert "Run's score: hidden until you rate (blind)" in text and "(1.00)" not in text
                await pilot.press("n")  # rated (against the score, which the rater could not see)
                await settle(pilot, app)
                text = target_text(screen, "#target-content")
                assert "Gold answer: exact: 2" in text and "Run's score: right (1.00)" in text
            else:  # the first item was rated at the other size; the queue opens on the next open one
                text = target_text(screen, "#target-content")
                assert "Gold answer: exact: 3" in text and "hidden until you rate (blind)" in text
                await pilot.press("left")
                await settle(pilot, app)
                assert "Run's score: right (1.00)" in target_text(screen, "#target-content")


def test_a_rater_not_blind_sees_the_score_at_once(engine, study) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "seed") as s:
        add_annotator(s, "cat", "annotator")
        assign(s, "pass-fail", [Target("trajectory", study["trajectories"][1])], ["cat"], 1, blind=False)
    with session_scope(engine) as s:
        state = rating_queue(s, "cat")
        item = rating_item(s, "cat", state.entries[0])
    assert not item.view.hidden
    assert (item.evidence.gold, item.evidence.score, item.evidence.right) == ("exact: 3", "wrong (0.00)", False)


async def test_adjudication_queue_shows_gold_and_score(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ["yes", "no", "yes", "yes", "no"], study["trajectories"])
    rate_as(engine, "bob", ["yes", "yes", "no", "no", "no"], study["trajectories"])
    for size in SIZES:
        app = make_tui(actor="rev")
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            app.push_screen(AdjudicationScreen())
            await settle(pilot, app)
            screen = app.screen
            assert screen.item is not None and screen.item.disagreement.unit.id == study["trajectories"][1]
            text = target_text(screen, "#adj-values")
            assert "gold exact: 3 · run's score wrong (0.00)" in text


def test_adjudication_item_hides_the_score_from_a_reviewer_who_owes_a_blind_rating(engine, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ["yes", "no", "yes", "yes", "no"], study["trajectories"])
    rate_as(engine, "bob", ["yes", "yes", "no", "no", "no"], study["trajectories"])
    t1 = study["trajectories"][1]
    with session_scope(engine, "seed") as s:
        assign(s, "pass-fail", [Target("trajectory", t1)], ["rev"], 1, blind=True)
    with session_scope(engine) as s:
        d = next(d for d in disagreement_queue(s, QueueFilter()) if d.unit.id == t1)  # as listed for nobody
        item = adjudication_item(s, "rev", d)
    assert item.view.hidden and item.evidence.score_hidden and item.evidence.score == ""
    assert item.evidence.gold == "exact: 3"


def test_an_item_opened_from_the_queue_reuses_the_queues_score(engine, study, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The queue scored every run once to flag it; opening an item must not score the run again, and
    must show the same score as scoring it afresh."""
    from tui.screens.review import adjudication_data, evidence

    rate_as(engine, "ann", ["yes", "no", "yes", "yes", "no"], study["trajectories"])
    rate_as(engine, "bob", ["yes", "yes", "no", "no", "no"], study["trajectories"])
    t1 = study["trajectories"][1]
    with session_scope(engine) as s:
        queue = adjudication_data.flagged_queue(s, QueueFilter())
        d = next(d for d in queue.items if d.unit.id == t1)
        flag = queue.flags[flag_key(d)]
        fresh = adjudication_item(s, "rev", d)  # no flag: scored here

        def scored_again(*_a: Any, **_k: Any) -> None:
            raise AssertionError("the run was scored a second time")

        monkeypatch.setattr(evidence, "trajectory_outcome", scored_again)
        reused = adjudication_item(s, "rev", d, flag)
    assert reused.evidence == fresh.evidence and reused.evidence.score == "wrong (0.00)"
    assert reused.flag == flag


def test_a_prediction_that_carried_an_error_is_a_failed_step() -> None:
    from tui.screens.runs.trajectory_data import model_steps

    pred = {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {"image": "x"}}}],
        "error": {"type": "ActionError", "msg": "no such image"},
    }
    fine = {"role": "assistant", "content": "6"}
    events = [
        Event(id=k + 1, trajectory_id=1, ordinal=k, kind=ev.STEP_PREDICTION, payload={"gold_index": k, "prediction": p})
        for k, p in enumerate([pred, fine])
    ]
    failed, answer = model_steps(events)
    assert not failed.ok and failed.result == "ActionError: no such image"
    assert answer.ok
