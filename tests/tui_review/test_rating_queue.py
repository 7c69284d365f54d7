"""Rating queue: keyboard rating in blind mode stores ratings; verdicts appear only after rating."""

from __future__ import annotations

from sqlmodel import select, col

from annotation.review.scales import get_scale
from store import session_scope
from store.models import Assignment, HumanRating, Task
from tests.tui_review.conftest import rate_as, settle
from tui.screens.review.rating_queue import RatingQueueScreen
from tui.widgets.review.panels import JudgementsPanel, VerdictCard
from tui.widgets.review.scale_keys import legend, scale_keys


def test_scale_keys_follow_the_scale(session) -> None:  # type: ignore[no-untyped-def]
    assert scale_keys(get_scale(session, "yes-no")) == {"y": "yes", "n": "no"}
    assert scale_keys(get_scale(session, "pass-fail")) == {"y": "pass", "n": "fail"}
    assert scale_keys(get_scale(session, "atp-agreement")) == {"0": 0, "1": 1, "2": 2}
    ten = scale_keys(get_scale(session, "isg-1-10"))
    assert ten["0"] == 10 and ten["1"] == 1 and ten["9"] == 9 and len(ten) == 10
    modes = scale_keys(get_scale(session, "mme-failure-mode"))
    assert modes["1"] == "Missing search tools" and modes["7"] == "PostVisual-Perception-Deficit"
    assert legend(get_scale(session, "isg-1-10")) == "1–9 = value, 0 = 10"


async def test_rate_five_targets_blind_with_keys(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    app = make_tui(actor="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RatingQueueScreen())
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, RatingQueueScreen)
        # blind: nothing of the judges is visible before rating
        assert not screen.query(VerdictCard)
        assert "hidden until you rate" in str(screen.query_one(".hidden-note").render())
        await pilot.press("t")  # the full trajectory would show the verdicts: refused while blind
        await settle(pilot, app)
        assert app.screen is screen
        for i, key in enumerate(["y", "n", "y", "y", "n"]):
            await pilot.press(key)
            await settle(pilot, app)
            if i == 0:  # after rating, both judges' verdicts are shown side by side
                cards = screen.query_one(JudgementsPanel).query(VerdictCard)
                assert len(cards) == 2
                assert "judge-a" in str(cards[0].render())
            if i == 2:  # a comment goes with the next rating
                await pilot.press("right", "c", *"too short", "enter")
                await settle(pilot, app)
                continue
            await pilot.press("right")
            await settle(pilot, app)
        assert screen.state is not None and screen.state.done == 5
    with session_scope(engine) as s:
        rows = s.exec(select(HumanRating).order_by(col(HumanRating.id))).all()
        assert [(r.target_id, r.value, r.blind) for r in rows] == [
            (t, v, True) for t, v in zip(study["trajectories"], ["yes", "no", "yes", "yes", "no"])
        ]
        assert rows[3].comment == "too short" and rows[0].comment is None
        revisions = dict(s.exec(select(Task.id, Task.revision)).all())
        assert all(r.task_revision == revisions[r.task_id] for r in rows)
        open_left = s.exec(select(Assignment).where(Assignment.status == "open")).all()
        assert {a.annotator_id for a in open_left} == {2}  # only bob's five remain


async def test_undo_last_rating_reopens_assignment(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    app = make_tui(actor="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RatingQueueScreen())
        await settle(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert len(s.exec(select(HumanRating)).all()) == 1
        await pilot.press("u")
        await settle(pilot, app)
        screen = app.screen
        assert screen.state is not None and screen.state.done == 0
        assert "hidden until you rate" in str(screen.query_one(".hidden-note").render())
    with session_scope(engine) as s:
        assert s.exec(select(HumanRating)).all() == []
        first = s.exec(select(Assignment).order_by(col(Assignment.id))).first()
        assert first is not None and first.status == "open"


async def test_dimensions_rated_with_digits_zero_is_ten(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    from annotation.review.assignments import assign
    from annotation.review.targets import Target

    with session_scope(engine, "seed") as s:
        assign(s, "isg-1-10", [Target("trajectory", study["trajectories"][0])], ["ann"], 1, blind=False)
    # ann's blind yes-no item on the same trajectory is done, so nothing there is hidden any more
    rate_as(engine, "ann", ["yes"], study["trajectories"][:1])
    app = make_tui(actor="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RatingQueueScreen(scale="isg-1-10"))
        await settle(pilot, app)
        screen = app.screen
        assert screen.item is not None and screen.item.scale.name == "isg-1-10"
        assert screen.query(VerdictCard)  # not blind: the judges are in view from the start
        await pilot.press("7", "8", "up", "0")  # up goes back to the second dimension: 0 replaces 8 with 10
        assert screen.pending == {"coherence": 7, "content_accuracy": 10}
        await pilot.press("9", "5", "6", "4")
        await settle(pilot, app)
    with session_scope(engine) as s:
        row = s.exec(select(HumanRating).where(HumanRating.scale == "isg-1-10")).one()
        assert row.scale == "isg-1-10" and row.value == {
            "coherence": 7,
            "content_accuracy": 10,
            "relevance_and_responsiveness": 9,
            "visual_textual_alignment": 5,
            "creativity_and_originality": 6,
            "overall": 4,
        }


async def test_without_as_the_login_rates_as_the_audit_names_it(make_tui, engine, study, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No ``--as``: the queue said "start chainmark with --as NAME to rate" although every save was
    audited under the login name; now the person is the one the audit names (here CHAINMARK_USER)."""
    monkeypatch.setenv("CHAINMARK_USER", "ann")
    app = make_tui(actor=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RatingQueueScreen())
        await settle(pilot, app)
        screen = app.screen
        assert "--as" not in str(screen.query_one("#queue-status").render())
        assert screen.state is not None and len(screen.state.entries) == 5
        assert "hidden until you rate" in str(screen.query_one(".hidden-note").render())  # blind for ann
