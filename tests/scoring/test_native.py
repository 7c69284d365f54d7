"""chainmark's own benchmark format scores (issue 33): every answer-spec kind, checkpoints S/V/R with ordering,
and the reference chain aligned step by step. Expected values are worked out by hand in each test."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.benchmarks import get_profile
from evaluation.benchmarks import native
from evaluation.benchmarks.base import ScoreContext
from evaluation.scoring.embedding import HashingEmbedder, simscore
from evaluation.scoring.items import DictOracle
from tests.scoring.builders import answer, call, item, ja, res


def ctx(oracle: Any = None) -> ScoreContext:
    return ScoreContext(oracle=oracle or DictOracle({}), embedder_factory=HashingEmbedder)


def answered(spec: dict[str, Any], text: str, traj: int = 1) -> Any:
    return item({"answer_spec": spec, "query": "q", "source_id": f"t{traj}"}, [answer(text)], traj_id=traj)


def test_the_native_format_has_a_profile() -> None:
    assert get_profile("chainmark") is native.PROFILE


@pytest.mark.parametrize(
    ("spec", "text", "correct"),
    [
        ({"kind": "whitelist", "groups": [["58", "fifty-eight"]], "blacklist": None}, "It is fifty-eight.", True),
        ({"kind": "whitelist", "groups": [["58"]], "blacklist": [["59"]]}, "58 or 59", False),
        ({"kind": "exact", "value": "Paris", "variants": ["paris, france"]}, "Paris, France", True),
        ({"kind": "contains", "value": "JAL"}, "operated by JAL", True),
        ({"kind": "numeric", "value": "3.14", "tolerance": 0.01}, "3.145", True),
        ({"kind": "numeric", "value": "3.14", "tolerance": 0.001}, "3.145", False),
        ({"kind": "numeric", "value": "3.14", "tolerance": 0.01}, "about 3.14", False),  # the whole answer
        ({"kind": "mcq", "options": {"A": "red", "B": "blue"}, "letter": "B"}, "B", True),
        ({"kind": "mcq", "options": {"A": "red", "B": "blue"}, "letter": "B"}, "A", False),
    ],
)
def test_matched_answer_kinds_are_right_or_wrong(spec: dict[str, Any], text: str, correct: bool) -> None:
    out = native.PROFILE.score([answered(spec, text)], ctx())
    assert out.per_item[0]["answer"] == {"kind": spec["kind"], "correct": correct}
    assert out.metrics["AnswerAcc"] == (100.0 if correct else 0.0)


def test_references_score_the_best_cosine_with_the_runs_embedder() -> None:
    spec = {"kind": "references", "references": ["a red bus on a bridge", "the sky"]}
    out = native.PROFILE.score([answered(spec, "a red bus")], ctx())
    expected = simscore(HashingEmbedder(), "a red bus", spec["references"])
    assert out.per_item[0]["answer"]["similarity"] == pytest.approx(expected)
    assert out.metrics["AnswerSim"] == pytest.approx(expected * 100) and out.metrics["AnswerAcc"] is None


def test_interleaved_answers_wait_for_the_rubric_judge_then_use_its_score() -> None:
    spec = {"kind": "interleaved", "golden": [{"type": "text", "content": "fold twice"}]}
    pending = native.PROFILE.score([answered(spec, "fold")], ctx())
    assert pending.pending_judgements == 1 and native.PROFILE.item_pending(pending.per_item[0]).startswith("no verdict")

    class Rubric(DictOracle):
        def ask(self, req):
            assert req.judge == native.RUBRIC_JUDGE and req.vars["golden"] == spec["golden"]
            return ja("7", score=7.0)

    judged = native.PROFILE.score([answered(spec, "fold")], ctx(Rubric({})))
    assert judged.metrics["RubricScore"] == 7.0 and native.PROFILE.item_score(judged.per_item[0]) == 0.7


def chain_item() -> Any:
    """Gold: OCR(image 0) → "58", Calculator(58*2) → "116". The model: OCR right, Calculator with other
    arguments, then a Plot the chain does not have; its answer repeats 116."""
    steps = [
        {"ordinal": 0, "tool_name": "OCR", "tool_args": {"image": "0"}, "result_text": "58", "is_final": False},
        {
            "ordinal": 1,
            "tool_name": "Calculator",
            "tool_args": {"expression": "58*2"},
            "result_text": "116",
            "is_final": False,
        },
        {"ordinal": 2, "is_final": True, "final_answer": "116"},
    ]
    events = [
        call("OCR", {"image": "0"}, "a"),
        res("OCR", "a", "58"),
        call("Calculator", '{"expression": "2*58"}', "b"),  # type: ignore[arg-type]  # a JSON string, read as JSON
        res("Calculator", "b", "116"),
        call("Plot", {"command": "x"}, "c"),
        res("Plot", "c", ""),
        answer("The total is 116."),
    ]
    checkpoints = [
        {"id": 1, "key": "V1", "axis": "V", "tools": ["OCR"], "code_check": {}},
        {"id": 2, "key": "V2", "axis": "V", "tools": ["Solver"], "code_check": {}},
    ]
    ordering = [{"key": "O1", "sequence": ["V1", "V2"], "max_gap": 0}]
    return item(
        {"answer_spec": {"kind": "contains", "value": "116"}, "query": "q", "source_id": "c1", "category": "math"},
        events,
        reference_steps=steps,
        checkpoints=checkpoints,
        ordering=ordering,
    )


def test_reference_chain_is_aligned_step_by_step_with_the_model_calls() -> None:
    out = native.PROFILE.score([chain_item()], ctx())
    chain = out.per_item[0]["chain"]
    assert [(s["tool"], s["arguments"], s["result_used"]) for s in chain["steps"]] == [
        (True, True, False),  # "58" is never written again
        (True, False, True),  # 2*58 is not 58*2; "116" is in the answer
    ]
    m = out.metrics
    assert (m["ToolAcc"], m["ArgAcc"], m["ResultUse"]) == (100.0, 50.0, 50.0)
    # tools used {OCR, Calculator, Plot} against {OCR, Calculator}: P 2/3, R 1
    assert m["tool_precision"] == pytest.approx(200 / 3) and m["tool_recall"] == 100.0
    assert m["tool_f1"] == pytest.approx(80.0) and m["chain_length_ratio"] == 1.5


def test_checkpoints_score_s_v_r_with_ordering_by_the_agentic_mme_engine() -> None:
    out = native.PROFILE.score([chain_item()], ctx())
    assert out.per_item[0]["checkpoints"] == {"S": None, "V": 0.5, "R": 0.0, "PQS": 0.5}
    assert (out.metrics["V"], out.metrics["R"], out.metrics["S"]) == (50.0, 0.0, None)
    assert sorted((o.key, o.passed) for traj, o in out.outcomes if traj == 1) == [
        ("V1", True),
        ("V2", False),
    ]


def test_tables_by_category_and_by_level() -> None:
    a = answered({"kind": "exact", "value": "x"}, "x", traj=1)
    b = answered({"kind": "exact", "value": "x"}, "y", traj=2)
    a.task.update(category="easy", level="1")
    b.task.update(category="hard", level="2")
    out = native.PROFILE.score([a, b], ctx())
    assert out.by_category["easy"]["AnswerAcc"] == 100.0 and out.by_category["hard"]["AnswerAcc"] == 0.0
    assert out.by_category["level 1"]["items"] == 1 and out.by_category["level 2"]["AnswerAcc"] == 0.0
    assert out.mode == "faithful" and out.corrections == []


def test_none_answers_are_not_scored() -> None:
    out = native.PROFILE.score([answered({"kind": "none"}, "anything")], ctx())
    assert out.metrics["AnswerAcc"] is None and native.PROFILE.item_score(out.per_item[0]) is None
    assert native.PROFILE.item_pending(out.per_item[0]) == "the task has no answer to score"
