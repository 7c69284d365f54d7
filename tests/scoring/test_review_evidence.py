"""What the review screens read from evaluation: contradictions (pure), the GTA step scorer's per-step
decisions, and one trajectory's own score from the store."""

from __future__ import annotations

import pytest

from evaluation.benchmarks.base import ScoreContext
from evaluation.benchmarks.gta import PROFILE
from evaluation.contradictions import Claim, about_answer, contradictions, polarity
from evaluation.scoring.item_outcome import ItemOutcome, StepMark, step_marks, trajectory_outcome
from store import session_scope
from tests.scoring.test_gta import step_items


@pytest.mark.parametrize(
    ("label", "says"),
    [("yes", True), ("PASS", True), ("Correct", True), ("no", False), ("FAIL", False), ("incorrect", False)]
    + [("7", None), ("faithful", None), ("Tool-Misexecution", None), (None, None), ("", None)],
)
def test_polarity_reads_only_clear_labels(label, says) -> None:  # type: ignore[no-untyped-def]
    assert polarity(label) is says


def test_only_whole_or_answer_parts_judge_the_answer() -> None:
    assert about_answer("") and about_answer("answer") and about_answer("final_answer")
    assert not about_answer("cp1") and not about_answer("block 2")


def test_contradictions_against_the_answer_and_the_step() -> None:
    claims = [
        Claim("v1", "judge-a", True, "answer"),
        Claim("v2", "judge-b", False, "answer"),
        Claim("v3", "judge-c", None, "answer"),  # no clear claim: never a contradiction
        Claim("c1", "checkpoint cp1", True, "step", step_failed=True),
        Claim("c2", "checkpoint cp2", False, "step", step_failed=True),  # failed on a failed step: agrees
        Claim("c3", "checkpoint cp3", True, "step", step_failed=False),
    ]
    wrong = contradictions(claims, right=False, score=0.0)
    assert [(c.ref, c.text) for c in wrong] == [
        ("v1", "contradicts answer: scored wrong (0.00)"),
        ("c1", "contradicts step: its tool call failed"),
    ]
    right = contradictions(claims, right=True, score=1.0)
    assert [(c.ref, c.line()) for c in right] == [
        ("v2", "judge-b: contradicts answer: scored right (1.00)"),
        ("c1", "checkpoint cp1: contradicts step: its tool call failed"),
    ]
    # an unscored answer cannot be contradicted; a failed step still can
    assert [c.ref for c in contradictions(claims, right=None)] == ["c1"]


def test_gta_step_scorer_records_its_decision_per_gold_turn() -> None:
    out = PROFILE.score(step_items(), ScoreContext(mode="faithful", run_mode="step"))
    fish, cat, minus = (step_marks(row) for row in out.per_item)
    assert fish == (
        StepMark(0, "tool", "tool", tool=True, args=False),  # absolute path: not the gold's argument
        StepMark(1, "tool", "tool", tool=True, args=False),
        StepMark(2, "answer", "answer", answer=1.0),
    )
    assert [m.label() for m in fish] == ["ToolAcc ✓ ArgAcc ✗", "ToolAcc ✓ ArgAcc ✗", "answer ✓"]
    assert cat[0] == StepMark(0, "tool", "tool", tool=True, args=True, error=True)  # ToolAcc ignores the error
    assert cat[0].label() == "ToolAcc ✓ ArgAcc ✓ · error"
    assert cat[1].answer is None  # no gold reference: nothing to score
    assert minus == (StepMark(0, "answer", "answer", answer=0.0),)  # "-3" never matches under \b
    # the counts the metrics come from agree with the marks
    tool_marks = [m for marks in (fish, cat, minus) for m in marks if m.gold == "tool"]
    assert out.metrics["ToolAcc"] == pytest.approx(100 * sum(bool(m.tool) for m in tool_marks) / len(tool_marks))
    assert out.metrics["ArgAcc"] == pytest.approx(100 * sum(bool(m.args) for m in tool_marks) / len(tool_marks))


def test_outcome_describes_itself() -> None:
    assert ItemOutcome(1.0).describe() == "right (1.00)" and ItemOutcome(1.0).right is True
    assert ItemOutcome(0.25).describe() == "wrong (0.25)" and ItemOutcome(0.25).right is False
    assert ItemOutcome(None, note="no answer to score").describe() == "not scored: no answer to score"


def test_one_trajectorys_outcome_is_its_score_in_the_whole_run(engine, blobs) -> None:  # type: ignore[no-untyped-def]
    from evaluation.compare import load_run_results
    from tests.tui_review.conftest import seed_study

    study = seed_study(engine, blobs)
    whole = load_run_results(engine, [study["run"]])[0]
    with session_scope(engine) as s:
        alone = [trajectory_outcome(s, t).score for t in study["trajectories"]]
    assert alone == [whole.tasks[t].score for t in study["tasks"]] == [1.0, 0.0, 1.0, 0.0, 1.0]
    with session_scope(engine) as s:
        with pytest.raises(LookupError):
            trajectory_outcome(s, 999)


def test_an_item_its_profile_cannot_score_says_why(engine, blobs) -> None:  # type: ignore[no-untyped-def]
    from store.models import Benchmark
    from tests.tui_review.conftest import seed_study

    study = seed_study(engine, blobs)
    with session_scope(engine) as s:
        bench = s.get(Benchmark, 1)
        assert bench is not None
        bench.source_format, bench.name, bench.settings = "no-such-format", "no-such-bench", {}
    with session_scope(engine) as s:
        out = trajectory_outcome(s, study["trajectories"][0])
    assert out.score is None and out.right is None
    assert out.describe().startswith("not scored: could not score (UnknownProfile:")


def test_rating_contradictions_read_only_clear_labels() -> None:
    from evaluation.contradictions import rating_contradictions

    values = {
        "human:ann": "no",
        "human:bob": "Yes",
        "judge:judge-a": True,
        "judge:judge-b": 7,  # a score on a scale: no clear claim
        "human:cy": {"faithful": 3},  # a dimension dict: no clear claim
        "human:di": "partially",
    }
    wrong = rating_contradictions(values, right=False, score=0.0)
    assert [(c.who, c.text) for c in wrong] == [
        ("human:bob", "contradicts answer: scored wrong (0.00)"),
        ("judge:judge-a", "contradicts answer: scored wrong (0.00)"),
    ]
    assert [c.who for c in rating_contradictions(values, right=True, score=1.0)] == ["human:ann"]
    assert rating_contradictions(values, right=None) == []  # an unscored answer cannot be contradicted


def test_a_judged_outcome_says_it_is_judged_and_whether_the_verdict_is_in() -> None:
    waiting = ItemOutcome(None, note="no verdict yet", judge="atp-chief", verdict=False)
    assert waiting.describe() == "judged by LLM judge atp-chief, not auto-scored: no verdict yet"
    assert waiting.right is None
    default = ItemOutcome(0.0, note="no verdict yet", judge="isg-holistic", verdict=False)
    assert default.describe() == (
        "judged by LLM judge isg-holistic, not auto-scored: no verdict yet (counts 0.00, the benchmark's default)"
    )
    assert default.right is None  # the default is nobody's judgement: nothing to contradict
    judged = ItemOutcome(0.72, judge="atp-chief")
    assert judged.describe() == "judged 0.72 by LLM judge atp-chief (not auto-scored)" and judged.right is True


def test_an_unjudged_isg_answer_is_not_called_wrong(engine) -> None:  # type: ignore[no-untyped-def]
    from annotation import tasks as authoring
    from tests.scoring.builders import answer, stored_run, stored_trajectory

    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "isg-demo", "isg")
        task = authoring.create_task(s, "isg-demo", "Draw a crane, then describe it", source_id="q1")
        tid = stored_trajectory(s, run, task.id or 0, [answer("A crane folded from paper.")]).id
    with session_scope(engine) as s:
        out = trajectory_outcome(s, tid or 0)
    assert out.score == 0.0 and out.judge == "isg-holistic" and out.right is None  # the score is unchanged
    assert out.describe() == (
        "judged by LLM judge isg-holistic, not auto-scored: the answer has no interleaved output for the judge"
        " (counts 0.00, the benchmark's default)"
    )
