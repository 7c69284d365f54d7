"""ISG faithful scoring as ``ISG-eval.py`` + ``calculate_performance.py`` compute it (issue 15).

Every expected value below was established by running the reference (Dongping-Chen/ISG ``de504cd``) on the
same item with the same raw judge replies (``evaluation/conformance/drivers/isg_driver.py``); the
comment beside each says what the reference does. Replies are raw text, as a judge model sends them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluation.benchmarks import isg
from evaluation.benchmarks.base import ScoreContext
from evaluation.judges.parsers import json_holistic, json_judge
from evaluation.scoring.items import DictOracle, JudgeAnswer
from tests.scoring.builders import ev, item

GOLDEN = [
    {"type": "text", "content": "t"},
    {"type": "image", "content": "images/g1.png"},
    {"type": "image", "content": "images/g2.png"},
]
GOOD = [{"type": "text", "content": "washing"}, {"type": "image", "asset_id": 21}, {"type": "image", "asset_id": 22}]
BLOCKS = {
    "questions": [
        {"subject": "<gen_text1>", "object": "<gen_img1>", "relation": "r", "Question": "Does <gen_text1> fit?"},
        {"subject": "<gen_img1>", "object": "<gen_img2>", "relation": "r", "Question": "Same person?"},
    ]
}
IMAGES = {
    "questions": [
        {"image": "<gen_img1>", "Question": "Hands?", "id": 0, "Preliminary": []},
        {"image": "<gen_img1>", "Question": "Wet?", "id": 1, "Preliminary": [0]},
        {"image": "<gen_img2>", "Question": "Soap?", "id": 2, "Preliminary": []},
    ]
}
NORMAL = {
    "image:0": '{"Judge": "Yes"}',
    "image:2": '{"Judge": "No"}',
    "block:0:score": '{"Judge": 8}',
    "block:0:yes_no": '{"Judge": "Yes"}',
    "block:1:score": '{"Judge": 6}',
    "block:1:yes_no": '{"Judge": "No"}',
    "holistic": '{"overall_score": 7}',
}
ERROR_DEFAULTS = {"structure": False, "image": 0.0, "block": 1.0, "holistic": 1.0}


def answer(raw: str, holistic: bool) -> JudgeAnswer:
    p = (json_holistic if holistic else json_judge)(raw)  # what `chainmark judge` stores
    return JudgeAnswer(label=p.label, score=p.score, parsed=p.parsed, raw_output=raw, judge_name="scripted")


def score(
    replies: dict[str, str],
    *,
    output: list[dict[str, Any]] | None = None,
    image_qa: Any = IMAGES,
    mode: str = "faithful",
) -> dict[str, Any]:
    raw = {**NORMAL, **replies}
    judge = {"image": "isg-image", "block": "isg-block", "holistic": "isg-holistic"}
    oracle = DictOracle(
        {(judge[part.split(":")[0]], part): answer(text, part == "holistic") for part, text in raw.items()}
    )
    it = item(
        {
            "subcategory": "Prediction",
            "source_id": "0001",
            "query": "Next?",
            "answer_spec": {"kind": "interleaved", "golden": GOLDEN},
            "source_record": {
                "Query": [{"type": "text", "content": "Next?"}],
                "predict": {"block_qa": BLOCKS, "image_qa": image_qa},
            },
        },
        [ev("answer", {"text": "", "blocks": output or GOOD})],
        traj_id=1,
    )
    ctx = ScoreContext(mode=mode, oracle=oracle)
    row = isg.PROFILE.score([it], ctx).per_item[0]
    return {k: row[k] for k in ("structure", "image", "block", "holistic")} | {"corrections": ctx.corrections}


def values(out: dict[str, Any]) -> dict[str, Any]:
    return {k: out[k] for k in ("structure", "image", "block", "holistic")}


def test_the_normal_item() -> None:
    assert values(score({})) == {"structure": True, "image": pytest.approx(1 / 3), "block": 7.0, "holistic": 7.0}


def test_a_fenced_reply_is_invalid_json_for_the_reference() -> None:
    # json.loads fails → {"error", "raw_output"}: no Judge, so the image question counts no; the
    # fenced block score is not counted and the holistic reply has no overall_score → 1
    out = score(
        {
            "image:0": '```json\n{"Judge": "Yes"}\n```',
            "block:0:score": '```json\n{"Judge": 2}\n```',
            "holistic": '```json\n{"overall_score": 8}\n```',
        }
    )
    assert values(out) == {"structure": True, "image": 0.0, "block": 6.0, "holistic": 1.0}
    fixed = score({"image:0": '```json\n{"Judge": "Yes"}\n```'}, mode="fixed")
    assert fixed["image"] == pytest.approx(1 / 3) and "isg-lenient-judge-json" in fixed["corrections"]


def test_bool_block_scores_are_summed_as_numbers() -> None:
    assert score({"block:0:score": '{"Judge": true}', "block:1:score": '{"Judge": 7}'})["block"] == 4.0


def test_a_null_block_reply_makes_the_whole_item_one() -> None:
    # 'Judge' in None raises inside the aggregation's try → 1; a list reply is only skipped
    assert score({"block:0:score": "null", "block:1:score": '{"Judge": 9}'})["block"] == 1.0
    assert score({"block:0:score": "[1]", "block:1:score": '{"Judge": 9}'})["block"] == 9.0


def test_a_non_string_image_judge_fails_the_item() -> None:
    # judge['Judge'].lower() raises in evaluate_image: result = {"error": …}
    assert values(score({"image:0": '{"Judge": true}'})) == ERROR_DEFAULTS
    fixed = score({"image:0": '{"Judge": true}'}, mode="fixed")
    assert fixed["structure"] is True and "isg-item-errors" in fixed["corrections"]


def test_an_empty_image_qa_dict_fails_the_item() -> None:
    assert values(score({}, image_qa={})) == ERROR_DEFAULTS  # keys[0] of an empty dict


def test_a_prerequisite_token_that_is_no_question_id_fails_the_item() -> None:
    qa = [{"image": "<gen_img1>", "Question": "Hands?", "id": 0, "Preliminary": ["<gen_img2>"]}]
    assert values(score({}, image_qa=qa)) == ERROR_DEFAULTS  # number_dict['<gen_img2>']: KeyError


def test_a_question_without_its_image_key_fails_the_item() -> None:
    qa = [{"Question": "Hands?", "id": 0, "Preliminary": []}]
    assert values(score({}, image_qa=qa)) == ERROR_DEFAULTS


def test_holistic_false_counts_zero() -> None:
    assert score({"holistic": '{"overall_score": false}'})["holistic"] == 0.0
    assert score({"holistic": '{"overall_score": true}'})["holistic"] == 1.0


def test_a_missing_output_image_fails_the_questions_that_show_it() -> None:
    output = [GOOD[0], {"type": "image", "content": "gen/nowhere.png", "missing": True}, GOOD[2]]
    assert values(score({}, output=output)) == ERROR_DEFAULTS  # encode_image raises in evaluate_image
    only_holistic = score({}, output=output, image_qa=[])
    # no image question; block question 0 shows <gen_img1> → the item fails in evaluate_block
    assert values(only_holistic) == ERROR_DEFAULTS


def test_conformance_view_names_categories_as_the_aggregation_prints_them() -> None:
    res = isg.PROFILE.score([], ScoreContext(oracle=DictOracle({})))
    view = isg.conformance_ours(res)
    assert view["metrics"]["Style_Transer.structure"] == 0 and len(view["metrics"]) == 32
    assert json.dumps(view)  # replies and values are plain JSON
