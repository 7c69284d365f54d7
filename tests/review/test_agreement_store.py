"""Agreement over store rows: matrices from ratings + verdicts, reports, queue, rankings, study."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.engine import Engine

from annotation.review.adjudication import adjudicate
from annotation.review.annotators import add_annotator
from annotation.review.ratings import rate
from annotation.review.targets import Target
from evaluation.agreement.disagreements import disagreements
from evaluation.agreement.matrix import Unit, collect
from evaluation.agreement.rankings import judge_error_correlation, model_ranking
from evaluation.agreement.study import build_study, render_csv, render_markdown
from evaluation.agreement.summary import agreement_report
from store import session_scope
from store.models import Judge, Verdict

from .conftest import World
from tests.support.must import must

ANN = ["yes", "no", "no", "yes"]
BOB = ["yes", "no", "yes", "yes"]


@pytest.fixture
def rated(engine: Engine, world: World) -> World:
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        add_annotator(s, "bob")
        add_annotator(s, "rev", role="reviewer")
        for traj, a, b in zip(world.trajectories[:4], ANN, BOB):
            rate(s, "ann", "yes-no", Target("trajectory", traj), a)
            rate(s, "bob", "yes-no", Target("trajectory", traj), b)
    return world


def test_matrix_mixes_people_and_judges(engine: Engine, rated: World) -> None:
    with session_scope(engine, "t") as s:
        (m,) = collect(s, "yes-no")
        assert m.raters == ["human:ann", "human:bob", "judge:lenient", "judge:strict"]
        assert len(m.units) == 8
        rep = agreement_report(m, resamples=200, seed=1)
        pair = {(p.a, p.b): p for p in rep.pairs}
        ab = pair[("human:ann", "human:bob")]
        assert ab.kind == "human-human" and ab.n == 4
        assert ab.statistics["percent_agreement"].value == pytest.approx(0.75)
        assert ab.statistics["cohen_kappa"].value == pytest.approx(0.5)
        strict = pair[("human:ann", "judge:strict")]
        assert strict.kind == "human-judge" and strict.statistics["cohen_kappa"].value == pytest.approx(1.0)
        assert pair[("judge:lenient", "judge:strict")].n == 8
        assert rep.overall["krippendorff_alpha_nominal"].value is not None
        json.dumps(rep.to_dict(), allow_nan=False)
        # only some raters
        (m2,) = collect(s, "yes-no", raters=["ann", "strict"])
        assert m2.raters == ["human:ann", "judge:strict"]


def test_single_rater_report_is_explained(engine: Engine, rated: World) -> None:
    with session_scope(engine, "t") as s:
        (m,) = collect(s, "yes-no", raters=["ann"])
        rep = agreement_report(m, resamples=0)
        assert all(e.value is None and "two or more raters" in (e.reason or "") for e in rep.overall.values())
        json.dumps(rep.to_dict(), allow_nan=False)


def test_disagreement_queue_and_adjudication(engine: Engine, rated: World) -> None:
    t = rated.trajectories
    with session_scope(engine, "t") as s:
        (m,) = collect(s, "yes-no")
        queue = disagreements(s, m)
        assert [d.unit.id for d in queue] == [t[1], t[2], t[4], t[5]]
        kinds = {d.unit.id: d.pair_kinds for d in queue}
        assert kinds[t[1]] == ["human-judge", "judge-judge"]
        assert kinds[t[2]] == ["human-human", "human-judge"]
        assert kinds[t[4]] == ["judge-judge"]
        assert [d.unit.id for d in disagreements(s, m, between=["human-human"])] == [t[2]]
        assert disagreements(s, m, threshold=0.5) != []
        adjudicate(s, "rev", Target("trajectory", t[2]), "yes-no", "no", "second image is wrong")
    with session_scope(engine, "t") as s:
        (m,) = collect(s, "yes-no")
        assert t[2] not in [d.unit.id for d in disagreements(s, m)]
        kept = [d for d in disagreements(s, m, include_adjudicated=True) if d.unit.id == t[2]]
        assert kept[0].adjudicated == "no"
        errors, source = judge_error_correlation(s, m)
        assert source == "1 adjudicated, 3 human consensus"  # t[0], t[1], t[3] agree; t[2] adjudicated
        assert errors.n_units == 4 and errors.effective_judges is None and errors.reason


def _isg_judges(engine: Engine, world: World) -> None:
    # overall scores: judge a prefers model-a, judge b prefers model-b, judge c agrees with a
    scores = {"isg-a": [8, 8, 7, 9, 4, 5, 3, 4], "isg-b": [3, 4, 2, 4, 8, 8, 9, 7], "isg-c": [9, 9, 8, 9, 6, 6, 5, 6]}
    with session_scope(engine, "t") as s:
        for name, values in scores.items():
            j = Judge(name=name, template="isg.v1", params={"scale": "isg-1-10"})
            s.add(j)
            s.flush()
            for traj, v in zip(world.trajectories, values):
                s.add(
                    Verdict(
                        judge_id=must(j.id),
                        target_kind="trajectory",
                        target_id=traj,
                        score=v / 10,
                        parsed={"coherence": {"score": v}, "overall_score": v},
                    )
                )


def test_dimensional_scale_model_ranking_and_error_correlation(engine: Engine, world: World) -> None:
    _isg_judges(engine, world)
    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        for traj, v in zip(world.trajectories, [8, 7, 7, 9, 5, 5, 4, 5]):
            rate(s, "ann", "isg-1-10", Target("trajectory", traj), {"coherence": v, "overall": v})
    with session_scope(engine, "t") as s:
        ms = {m.dimension: m for m in collect(s, "isg-1-10")}
        assert set(ms) == {
            "coherence",
            "content_accuracy",
            "relevance_and_responsiveness",
            "visual_textual_alignment",
            "creativity_and_originality",
            "overall",
        }
        overall = ms["overall"]
        assert overall.raters == ["human:ann", "judge:isg-a", "judge:isg-b", "judge:isg-c"]
        assert overall.cells[("judge:isg-a", Unit("trajectory", world.trajectories[0]))] == 8
        assert ms["coherence"].cells[("judge:isg-b", Unit("trajectory", world.trajectories[2]))] == 2
        assert ms["content_accuracy"].units == []
        ranking = model_ranking(s, overall)
        assert ranking.mean_scores["judge:isg-a"] == {"model-a": 8.0, "model-b": 4.0}
        assert ranking.spearman["judge:isg-a"]["judge:isg-c"].value == pytest.approx(1.0)
        assert ranking.spearman["judge:isg-a"]["judge:isg-b"].value == pytest.approx(-1.0)
        errors, source = judge_error_correlation(s, overall)
        assert source == "0 adjudicated, 8 human consensus"
        assert errors.matrix["judge:isg-a"]["judge:isg-a"].value == pytest.approx(1.0)
        assert errors.effective_judges is not None and 1.0 <= errors.effective_judges <= 3.0
        rep = agreement_report(overall, resamples=100)
        pair = {(p.a, p.b): p for p in rep.pairs}
        # ann vs isg-a on the 8 trajectories: hand check of MAE = (0+1+0+0+1+0+1+1)/8
        assert pair[("human:ann", "judge:isg-a")].statistics["mae"].value == pytest.approx(0.5)
        assert "cohen_kappa_quadratic" in pair[("human:ann", "judge:isg-a")].statistics


def test_study_tables_in_paper_shapes(engine: Engine, rated: World) -> None:
    t = rated.trajectories
    with session_scope(engine, "t") as s:
        for traj, v in zip(t[:4], [2, 2, 1, 0]):
            rate(s, "ann", "atp-agreement", Target("verdict", rated.verdicts[("strict", traj)]), v)
    with session_scope(engine, "t") as s:
        study = build_study(s)
    assert study.categories == ["Style", "Temp"]
    (atp,) = study.endorsement
    assert (atp.task, atp.level, atp.size) == ("strict", "Holistic", 4)
    assert atp.avg == pytest.approx(0.625)
    assert atp.distribution == {"0": 0.25, "1": 0.25, "2": 0.5}
    assert atp.by_category == {"Style": pytest.approx(1.0), "Temp": pytest.approx(0.25)}
    comp = {r.task: r for r in study.comparison}
    # consensus of ann & bob: t0 yes, t1 no, t2 tie (left out), t3 yes
    assert comp["strict (yes-no)"].metric == "Accuracy" and comp["strict (yes-no)"].size == 3
    assert comp["strict (yes-no)"].avg == pytest.approx(1.0)
    assert comp["lenient (yes-no)"].avg == pytest.approx(2 / 3)
    assert comp["lenient (yes-no)"].by_category == {"Style": pytest.approx(0.5), "Temp": pytest.approx(1.0)}
    md = render_markdown(study)
    assert "| strict | Holistic | Agreement (atp-agreement) | 4 | 62.50% | 25.00% | 25.00% | 50.00% |" in md
    assert "| Holistic | lenient (yes-no) | Accuracy | 3 | 0.667 | 0.500 | 1.000 |" in md
    csv_text = render_csv(study, "isg")
    assert csv_text.splitlines()[0] == "Eval Level,Eval Task,Metric,Size,Avg.,Style,Temp"
    with pytest.raises(ValueError, match="one table"):
        render_csv(study, "all")
