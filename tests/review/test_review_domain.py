"""The review domain: scales, assignments with overlap, blind views, stale ratings, adjudication."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from annotation import tasks as authoring
from annotation.review import ReviewError
from annotation.review.adjudication import adjudicate
from annotation.review.annotators import add_annotator
from annotation.review.assignments import assign, assignments
from annotation.review.blind import rating_view
from annotation.review.ratings import import_ratings_csv, rate, ratings, stale_ratings
from annotation.review.scales import BUILTIN_BY_NAME, MME_FAILURE_MODES, add_scale, get_scale, normalize_value
from annotation.review.targets import Target, targets_of_run
from store import session_scope
from store.models import HumanRating

from .conftest import World


def test_builtin_scales_and_value_normalisation() -> None:
    yn = BUILTIN_BY_NAME["yes-no"]
    assert [normalize_value(yn, v) for v in ("Yes", "n", "TRUE", "0")] == ["yes", "no", "yes", "no"]
    atp = BUILTIN_BY_NAME["atp-agreement"]
    assert normalize_value(atp, "2") == 2 and atp.level == "ordinal"
    with pytest.raises(ReviewError, match="not on scale atp-agreement"):
        normalize_value(atp, "3")
    mme = BUILTIN_BY_NAME["mme-failure-mode"]
    assert len(mme.values) == 7
    assert normalize_value(mme, "tool misexecution") == "Tool-Misexecution"
    assert set(MME_FAILURE_MODES) == set(mme.values)
    isg = BUILTIN_BY_NAME["isg-1-10"]
    assert normalize_value(isg, "coherence=7, Overall=6") == {"coherence": 7, "overall": 6}
    assert normalize_value(isg, {"overall": 6.5}) == {"overall": 6.5}
    with pytest.raises(ReviewError, match="not a dimension"):
        normalize_value(isg, "style=3")
    with pytest.raises(ReviewError, match="outside scale"):
        normalize_value(isg, "overall=11")


def test_custom_scale(session) -> None:  # type: ignore[no-untyped-def]
    add_scale(session, "fs-0-100", "interval", list(range(0, 101)), rubric="ATP Chief Judge final score")
    assert get_scale(session, "fs-0-100").level == "interval"
    with pytest.raises(ReviewError, match="built-in"):
        add_scale(session, "yes-no", "nominal", ["a", "b"])
    with pytest.raises(ReviewError, match="numeric"):
        add_scale(session, "bad", "interval", ["lo", "hi"])


def test_assignments_balance_overlap_and_are_idempotent(engine: Engine, world: World) -> None:
    with session_scope(engine, "t") as s:
        for n in ("ann", "bob", "cat"):
            add_annotator(s, n)
        targets = targets_of_run(s, world.runs[0], "trajectory")
        assert [t.id for t in targets] == world.trajectories[:4]
        made = assign(s, "yes-no", targets, ["ann", "bob", "cat"], overlap=2)
        assert len(made) == 8
        again = assign(s, "yes-no", targets, ["ann", "bob", "cat"], overlap=2)
        assert again == []
        rows = assignments(s)
        per_target: dict[int, set[str]] = {}
        for a in rows:
            per_target.setdefault(a.target.id, set()).add(a.annotator)
        assert all(len(v) == 2 for v in per_target.values())
        load = {n: sum(1 for a in rows if a.annotator == n) for n in ("ann", "bob", "cat")}
        assert sorted(load.values()) == [2, 3, 3]
        with pytest.raises(ReviewError, match="overlap 4 needs at least 4"):
            assign(s, "yes-no", targets, ["ann", "bob", "cat"], overlap=4)
        crs = targets_of_run(s, world.runs[1], "checkpoint_result")
        assert [t.id for t in crs] == world.checkpoint_results[4:]


def test_blind_view_hides_verdicts_and_other_ratings_until_rated(engine: Engine, world: World) -> None:
    traj = world.trajectories[0]
    target = Target("trajectory", traj)
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        add_annotator(s, "bob")
        assign(s, "yes-no", [target], ["ann", "bob"], overlap=2)
        rate(s, "bob", "yes-no", target, "no", comment="wrong final answer")
    with session_scope(engine, "t") as s:
        before = rating_view(s, "ann", target, "yes-no")
        assert before.blind and not before.rated
        assert before.verdicts == [] and before.other_ratings == [] and before.adjudications == []
        assert set(before.hidden) >= {"verdicts", "other_ratings"}
        text = repr(before.to_dict())
        assert "strict thinks" not in text and "wrong final answer" not in text
        assert before.content["trajectory"]["final_answer"] == f"answer {world.tasks[0]}"
        rate(s, "ann", "yes-no", target, "yes")
    with session_scope(engine, "t") as s:
        after = rating_view(s, "ann", target, "yes-no")
        assert after.rated and after.hidden == []
        assert {v["judge"] for v in after.verdicts} == {"strict", "lenient"}
        assert [r["annotator"] for r in after.other_ratings] == ["bob"]
        # an open (non-blind) view shows everything at once
        open_view = rating_view(s, "bob", Target("trajectory", world.trajectories[1]), "yes-no", blind=False)
        assert len(open_view.verdicts) == 2


def test_blind_checkpoint_result_hides_the_automatic_pass(engine: Engine, world: World) -> None:
    target = Target("checkpoint_result", world.checkpoint_results[0])
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        view = rating_view(s, "ann", target, "pass-fail")
        assert "automatic_result" not in view.content and "automatic_result" in view.hidden
        assert view.content["checkpoint"]["description"] == "crop the sign"
        rate(s, "ann", "pass-fail", target, "fail")
        assert rating_view(s, "ann", target, "pass-fail").content["automatic_result"]["passed"] is True


def test_verdict_target_shows_only_that_verdict(engine: Engine, world: World) -> None:
    vid = world.verdicts[("strict", world.trajectories[0])]
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        view = rating_view(s, "ann", Target("verdict", vid), "atp-agreement")
        assert view.content["verdict"]["id"] == vid and view.verdicts == []


def test_rating_records_revision_and_goes_stale(engine: Engine, world: World) -> None:
    tid = world.tasks[0]
    target = Target("event", _first_event(engine, world.trajectories[0]))
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        r = rate(s, "ann", "yes-no", target, "yes")
        rev = authoring.get_task(s, tid).revision
        assert r.task_id == tid and r.task_revision == rev
    with session_scope(engine, "t") as s:
        assert stale_ratings(s) == []
        authoring.edit_task(s, tid, query="a clearer question?")
    with session_scope(engine, "t") as s:
        stale = stale_ratings(s)
        assert [x.id for x in stale] == [r.id] and stale[0].current_revision == rev + 1
        # rating again makes a new current row; the old one is kept as history
        rate(s, "ann", "yes-no", target, "no")
    with session_scope(engine, "t") as s:
        assert stale_ratings(s) == []
        assert [x.value for x in ratings(s, current_only=False)] == ["yes", "no"]
        assert [x.current for x in ratings(s, current_only=False)] == [False, True]


def _first_event(engine: Engine, traj_id: int) -> int:
    from store.models import Event

    with session_scope(engine, "t") as s:
        return s.exec(select(Event.id).where(Event.trajectory_id == traj_id)).one()


def test_adjudication_needs_a_reviewer_and_keeps_originals(engine: Engine, world: World) -> None:
    target = Target("trajectory", world.trajectories[1])
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        add_annotator(s, "bob")
        add_annotator(s, "rev", role="reviewer")
        r1 = rate(s, "ann", "yes-no", target, "yes")
        r2 = rate(s, "bob", "yes-no", target, "no")
        with pytest.raises(ReviewError, match="only reviewers and admins"):
            adjudicate(s, "ann", target, "yes-no", "yes", "I say so")
        with pytest.raises(ReviewError, match="rationale"):
            adjudicate(s, "rev", target, "yes-no", "yes", "  ")
        v_strict = world.verdicts[("strict", target.id)]
        v_len = world.verdicts[("lenient", target.id)]
        a = adjudicate(
            s,
            "rev",
            target,
            "yes-no",
            "no",
            "the answer misses the second image",
            verdict_values={v_strict: "no", v_len: "yes"},
        )
        assert a.overrides["ratings"] == [r1.id] and a.overrides["verdicts"] == [v_len]
        assert a.overrides["confirmed"] == {"ratings": [r2.id], "verdicts": [v_strict]}
    with session_scope(engine, "t") as s:
        assert {h.value for h in s.exec(select(HumanRating)).all()} == {"yes", "no"}


def test_csv_import_is_all_or_nothing(engine: Engine, world: World, tmp_path: Path) -> None:
    good = tmp_path / "labels.csv"
    good.write_text(
        "annotator,scale,target_kind,target_id,value,comment\n"
        f"ann,yes-no,trajectory,{world.trajectories[0]},Yes,ok\n"
        f"bob,yes-no,trajectory,{world.trajectories[0]},0,\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "annotator,scale,target_kind,target_id,coherence,overall\n"
        f"ann,isg-1-10,trajectory,{world.trajectories[0]},7,6\n"
        f"ann,isg-1-10,trajectory,{world.trajectories[1]},7,12\n",
        encoding="utf-8",
    )
    with pytest.raises(ReviewError, match=r"bad.csv line 3: .*overall.*outside scale"):
        with session_scope(engine, "t") as s:
            add_annotator(s, "ann")
            import_ratings_csv(s, bad)
    with session_scope(engine, "t") as s:
        assert s.exec(select(HumanRating)).all() == []
        rows = import_ratings_csv(s, good, create_annotators=True)
        assert [(r.value, r.comment) for r in rows] == [("yes", "ok"), ("no", None)]


def test_verdict_targets_of_a_run(engine: Engine, world: World) -> None:
    with session_scope(engine, "t") as s:
        got = [t.id for t in targets_of_run(s, world.runs[1], "verdict")]
        want = sorted(v for (judge, traj), v in world.verdicts.items() if traj in world.trajectories[4:])
        assert got == want and len(got) == 8
        with pytest.raises(ReviewError, match="no trajectories"):
            targets_of_run(s, 999, "trajectory")
