"""Evidence flagged both ways: an MCQ extraction that contradicts the model's literal answer is flagged.

The issue's case: the model answered "A", the gold is "B", the extractor read "B" so the item scored
right. The extraction is what is wrong (flagged, on the trajectory view and in the adjudication flags);
the human who rated the answer wrong is right, and is not flagged.
"""

from __future__ import annotations

from typing import Any

from annotation import tasks as authoring
from annotation.review.annotators import add_annotator
from annotation.review.ratings import rate
from annotation.review.targets import Target
from evaluation.agreement.contradicted import flag_disagreements
from evaluation.agreement.disagreements import Disagreement
from evaluation.agreement.matrix import Unit
from evaluation.contradictions import literal_choice
from evaluation.scoring.item_outcome import trajectory_outcome
from store import session_scope
from evaluation.judges.runner import judge_run
from store.models import ModelEndpoint
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tui.screens.runs.trajectory_data import trajectory_view

GT = "VTC-Bench_GTToolChain.tsv"


def vtc_answered(engine: Any, blobs: Any, said: str, read: str, gold: str = "B") -> int:
    """A VTC trajectory whose answer is ``said``, gold ``gold``, and whose extractor (asked through
    ``judge_run`` on a scripted server) read ``read``; ann rated the answer wrong."""
    with ScriptedOpenAI(handler=lambda req: text(read)) as server:
        with session_scope(engine, actor="tester") as s:
            run = stored_run(s, "vtc-demo", "vtc")
            s.add(ModelEndpoint(name="judge-ep", base_url=server.base_url, model="judge-model"))
            row = {"index": "1", "id": "t1", "category": "color", "question": "Which one?", "answer": gold}
            row |= {"A": "red", "B": "blue", "C": "green", "D": "grey"}
            task = authoring.create_task(
                s,
                "vtc-demo",
                "Which one?",
                source_id="t1",
                category="color",
                answer_spec={"kind": "exact", "value": gold},
                source_record={GT: row},
            )
            traj = stored_trajectory(s, run, task.id or 0, [answer(said)], final_answer=said)
            add_annotator(s, "ann")
            rate(s, "ann", "yes-no", Target("trajectory", traj.id or 0), "no")
            run_id, traj_id = int(run.id or 0), int(traj.id or 0)
        assert judge_run(engine, blobs, run_id, "vtc-mcq-extract", "judge-ep")["verdicts"] == 1
    return traj_id


def disagreement(traj: int, values: dict[str, Any]) -> Disagreement:
    return Disagreement(Unit("trajectory", traj), "yes-no", "", 1.0, [], values, {})


def test_literal_choices() -> None:
    assert literal_choice("A") == {"A"} and literal_choice("(b)") == {"B"} and literal_choice("Answer: D") == {"D"}
    assert literal_choice("The answer is C") == {"C"} and literal_choice("A, C") == {"A", "C"}
    assert literal_choice("I think it is the blue one") is None and literal_choice("") is None


def test_an_extraction_that_misreads_the_answer_is_flagged_and_the_right_human_is_not(engine, blobs) -> None:  # type: ignore[no-untyped-def]
    traj = vtc_answered(engine, blobs, said="A", read="B")
    with session_scope(engine) as s:
        outcome = trajectory_outcome(s, traj)
        assert outcome.right is True  # scored right on the extractor's word
        view = trajectory_view(s, traj)
        flags = flag_disagreements(s, [disagreement(traj, {"human:ann": "no", "judge:x": "yes"})])
    lines = [c.line() for _, c in view.contradictions]
    assert lines == [
        "vtc-mcq-extract@judge-ep [answer]: contradicts the model's answer: it says A, the extractor read B"
    ]
    (flag,) = flags.values()
    assert [c.who for c in flag.contradictions] == ["judge:vtc-mcq-extract@judge-ep"]  # not human:ann
    assert flag.summary() == (
        "judge:vtc-mcq-extract@judge-ep: contradicts the model's answer: it says A, the extractor read B"
    )


def test_an_extraction_that_reads_the_answer_as_written_is_not_flagged(engine, blobs) -> None:  # type: ignore[no-untyped-def]
    traj = vtc_answered(engine, blobs, said="The answer is B", read="B")  # the rule misses it: asked
    with session_scope(engine) as s:
        view = trajectory_view(s, traj)
        flags = flag_disagreements(s, [disagreement(traj, {"human:ann": "no"})])
    assert view.contradictions == []
    assert [c.who for f in flags.values() for c in f.contradictions] == ["human:ann"]  # scored right, she says no
