"""Blind mode holds on every screen that shows judgements, not only in the rating queue: a blind
annotator with an unrated item who browses to its trajectory, the dashboard or the disagreement queue
sees no judge verdicts and no other person's values until they have rated it."""

from __future__ import annotations

from store import session_scope
from tests.tui_review.conftest import rate_as, settle
from tui.screens.review.adjudication import AdjudicationScreen
from tui.screens.review.adjudication_data import QueueFilter, disagreement_queue
from tui.screens.review.dashboard_data import DashboardQuery, dashboard_data
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.runs.trajectory_data import trajectory_view
from tui.widgets.review.panels import JudgementsPanel


def _screen_text(screen) -> str:  # type: ignore[no-untyped-def]
    parts = []
    for w in screen.query("Static"):
        parts.append(str(w.render()))
    return "\n".join(parts)


async def test_trajectory_viewer_hides_judgements_until_rated(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    tid = study["trajectories"][1]
    rate_as(engine, "bob", ["no"], [tid])  # bob has rated; ann (blind, assigned) has not
    app = make_tui(actor="ann")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(tid))
        await settle(pilot, app)
        text = _screen_text(app.screen)
        panel = str(app.screen.query_one(JudgementsPanel).query_one(".hidden-note").render())
        assert "judge-a" not in text and "judge-b" not in text and "bob" not in text
        assert "blind" in panel and "hidden until you rate" in panel
    rate_as(engine, "ann", ["yes"], [tid])
    app = make_tui(actor="ann")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(tid))
        await settle(pilot, app)
        text = _screen_text(app.screen)
        assert "judge-a" in text and "bob" in text  # rated: everything is in view


def test_viewer_data_keeps_own_rating_and_hides_checkpoint_results_of_a_blind_checkpoint_item(engine, study) -> None:  # type: ignore[no-untyped-def]
    from annotation.review.assignments import assign
    from annotation.review.targets import Target

    tid, crid = study["trajectories"][0], study["checkpoint_results"][0]
    with session_scope(engine, "seed") as s:
        assign(s, "pass-fail", [Target("checkpoint_result", crid)], ["bob"], 1, blind=True)
    rate_as(engine, "ann", ["yes"], [tid])
    with session_scope(engine) as s:
        bob = trajectory_view(s, tid, "bob")
        ann = trajectory_view(s, tid, "ann")
        everyone = trajectory_view(s, tid)
    assert not bob.judgements and all(not r.judgements for r in bob.rows)
    assert all(m.hidden for r in bob.rows for m in r.marks) and bob.checkpoints == 0
    assert "checkpoint results" in bob.hidden
    assert {j.who for j in ann.judgements} >= {"judge-a", "ann (yes-no)"}  # ann rated: sees it all
    assert {j.who for j in everyone.judgements} >= {"judge-a", "judge-b"}  # no viewer: nothing to hide


def test_dashboard_and_disagreements_leave_out_pending_blind_targets(engine, study) -> None:  # type: ignore[no-untyped-def]
    trajs = study["trajectories"]
    rate_as(engine, "bob", ["no"] * 5, trajs)
    rate_as(engine, "ann", ["yes", "yes"], trajs[:2])  # ann still owes trajectories 3..5
    with session_scope(engine) as s:
        data = dashboard_data(s, DashboardQuery(scale="yes-no", resamples=0), "ann")
        open_data = dashboard_data(s, DashboardQuery(scale="yes-no", resamples=0), "rev")
        ann_queue = disagreement_queue(s, QueueFilter(scale="yes-no"), "ann")
        rev_queue = disagreement_queue(s, QueueFilter(scale="yes-no"), "rev")
    assert data.report is not None and open_data.report is not None
    assert data.report["units"] == 2 and open_data.report["units"] == 5
    assert any("3 target(s) hidden" in n for n in data.report["notes"])
    assert {d.unit.id for d in ann_queue} <= set(trajs[:2])
    assert {d.unit.id for d in rev_queue} - set(trajs[:2])


async def test_adjudication_screen_hides_targets_the_viewer_still_owes(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    trajs = study["trajectories"]
    rate_as(engine, "bob", ["no"] * 5, trajs)
    app = make_tui(actor="ann")  # ann has rated nothing
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        assert not app.screen.items
        assert "bob" not in _screen_text(app.screen)
