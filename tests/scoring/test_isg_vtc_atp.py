"""ISG-Bench, VTC-Bench and ATP-Bench metrics on hand-built runs (values worked out by hand)."""

from __future__ import annotations

import pytest

from evaluation.benchmarks import isg, vtc, atp
from evaluation.benchmarks.base import ScoreContext
from evaluation.scoring.items import DictOracle
from tests.scoring.builders import answer, call, ev, item, ja, res

# ------------------------------------------------------------------ ISG

GOLDEN = [
    {"type": "text", "content": "t"},
    {"type": "image", "content": "images/g1.png"},
    {"type": "image", "content": "images/g2.png"},
]
PREDICT = {
    "block_qa": {
        "questions": [
            {"subject": "<gen_text1>", "object": "<gen_img1>", "relation": "r", "Question": "Does <gen_text1> fit?"},
            {"subject": "<gen_img1>", "object": "<gen_img2>", "relation": "r", "Question": "Same person?"},
            {"subject": "<all>", "object": "<gen_img2>", "relation": "r", "Question": "Skipped: <all> is never mapped"},
        ]
    },
    "image_qa": {
        "questions": [
            {"image": "<gen_img1>", "Question": "Hands?", "id": 0, "Preliminary": []},
            {"image": "<gen_img1>", "Question": "Wet hands?", "id": 1, "Preliminary": [0]},
            {"image": "<gen_img2>", "Question": "Soap?", "id": 2, "Preliminary": []},
        ]
    },
}


def isg_item(traj, sub, blocks):
    events = [ev("answer", {"text": "", "blocks": blocks})] if blocks is not None else []
    return item(
        {
            "subcategory": sub,
            "query": "Show what happens next",
            "answer_spec": {"kind": "interleaved", "golden": GOLDEN},
            "source_record": {"Query": [{"type": "text", "content": "Show what happens next"}], "predict": PREDICT},
        },
        events,
        traj_id=traj,
    )


def isg_items():
    good = [
        {"type": "text", "content": "washing"},
        {"type": "image", "asset_id": 21},
        {"type": "image", "asset_id": 22},
    ]
    return [
        isg_item(1, "Prediction", good),
        isg_item(2, "HowTo", [{"type": "text", "content": "only text"}]),
        isg_item(3, "Prediction", None),
    ]


def isg_oracle():
    return DictOracle(
        {
            ("isg-image", "image:0"): ja(parsed={"Judge": "Yes", "Reason": ""}),
            ("isg-image", "image:1"): ja(parsed={"Judge": "Yes", "Reason": ""}),
            ("isg-image", "image:2"): ja(parsed={"Judge": "No", "Reason": ""}),
            ("isg-block", "block:0:score"): ja(parsed={"Judge": 8}),
            ("isg-block", "block:0:yes_no"): ja(parsed={"Judge": "Yes"}),
            ("isg-block", "block:1:score"): ja(parsed={"Judge": "6"}),  # a string score
            ("isg-block", "block:1:yes_no"): ja(parsed={"Judge": "No"}),
            ("isg-holistic", "holistic"): ja(score=7.0, parsed={"overall_score": 7}),
        }
    )


def test_isg_faithful_prerequisite_bug_and_block_default() -> None:
    out = isg.PROFILE.score(isg_items(), ScoreContext(mode="faithful", oracle=isg_oracle()))
    rows = {r["trajectory_id"]: r for r in out.per_item}
    assert rows[1]["structure"] and rows[1]["image"] == pytest.approx(1 / 3)  # question 1 skipped (Preliminary)
    assert rows[1]["block"] == 1.0  # "6" is a string: the reference's sum() fails → default 1
    assert rows[1]["holistic"] == 7.0
    assert (rows[2]["structure"], rows[2]["image"], rows[2]["block"], rows[2]["holistic"]) == (False, 0.0, 1.0, 7.0)
    assert (rows[3]["image"], rows[3]["block"], rows[3]["holistic"]) == (0.0, 1.0, 1.0)  # no output at all
    tp = out.by_category["Temporal Prediction"]
    assert (
        tp["structure"] == 0.5 and tp["image"] == pytest.approx(1 / 6) and tp["block"] == 1.0 and tp["holistic"] == 4.0
    )
    assert out.by_category["Image-Text Complementation"]["holistic"] == 7.0


def test_isg_fixed_mode() -> None:
    out = isg.PROFILE.score(isg_items(), ScoreContext(mode="fixed", oracle=isg_oracle()))
    row = out.per_item[0]
    assert row["image"] == pytest.approx(2 / 3)  # question 1 asked: its prerequisite 0 was yes
    assert row["block"] == pytest.approx(7.0)  # (8 + 6) / 2
    assert out.by_category["Temporal Prediction"]["block"] == pytest.approx(4.0)


def test_isg_unjudged_blocks_default_to_one_and_requests_are_rendered() -> None:
    o = DictOracle({})
    out = isg.PROFILE.score(isg_items()[:1], ScoreContext(oracle=o))
    assert out.per_item[0]["block"] == 1.0 and out.per_item[0]["image"] == 0.0
    parts = sorted(r.target_part for r in o.pending)
    assert parts == [
        "block:0:score",
        "block:0:yes_no",
        "block:1:score",
        "block:1:yes_no",
        "holistic",
        "image:0",
        "image:2",
    ]
    text_image = next(r for r in o.pending if r.target_part == "block:0:score")
    assert text_image.images == (21,) and "washing" in text_image.vars["texts"]


# ------------------------------------------------------------------ VTC


def vtc_items():
    mcq = {"kind": "mcq", "letter": "B", "options": {"A": "6", "B": "5", "C": "3", "D": "4"}}
    one = item(
        {
            "category": "attention",
            "query": "How many?",
            "answer_spec": mcq,
            "source_record": {"model_tools_gt": "[“Crop”, “Flip”, “Resize”, “Sharpen”]"},
        },
        [
            call("opencv_crop", {"image": "/data/in.jpg", "param": {}}, "1"),
            res("opencv_crop", "1", "ok\n\nEdited Image Path: /w/a.png"),
            call("opencv_flip", {"image": "/data/in.jpg", "param": {}}, "2"),
            res("opencv_flip", "2", "ok\n\nEdited Image Path: /w/b.png"),
            call("opencv_resize", {"image": "/w/a.png", "param": {}}, "3"),
            res("opencv_resize", "3", "ok\n\nEdited Image Path: /w/c.png"),
            answer("B. 5"),
        ],
        traj_id=1,
    )
    two = item(
        {
            "category": "ocr",
            "query": "Read it",
            "answer_spec": {"kind": "exact", "value": "光陽機車"},
            "source_record": {"model_tools_gt": '["Crop", "Flip"]'},
        },
        [answer("It says 光陽機車")],
        traj_id=2,
    )
    three = item(
        {
            "category": "attention",
            "query": "Which?",
            "answer_spec": {**mcq, "letter": "C"},
            "source_record": {"model_tools_gt": '["Crop"]'},
        },
        [
            call("opencv_crop", {"image": "/data/in.jpg", "param": {}}, "1"),
            res("opencv_crop", "1", "Edited Image Path: /w/z.png"),
            answer("I think the answer is C"),
        ],
        traj_id=3,
    )
    four = item(
        {
            "category": "counting",
            "query": "Count",
            "answer_spec": {"kind": "exact", "value": "12"},
            "source_record": {"model_tools_gt": '["Crop", "Binarize"]'},
        },
        [answer("twelve")],
        traj_id=4,
    )
    return [one, two, three, four]


def test_vtc_apr_judge_fallback_tcr_mae_efficiency() -> None:
    o = DictOracle(
        {("vtc-mcq-extract", "answer"): ja("C", parsed={"letters": ["C"]}), ("vtc-open-judge", "answer"): ja("no")}
    )
    out = vtc.PROFILE.score(vtc_items(), ScoreContext(oracle=o))
    m = out.metrics
    assert m["APR"] == 75.0 and m["rule_only_accuracy"] == 50.0
    assert m["TCR"] == 50.0
    assert m["MAE"] == pytest.approx((1 + 2 + 0 + 2) / 4)
    # item 1: backtrack c.png ← resize(a.png) ← crop(in.jpg): 2 effective of 3; item 3: 1 of 1
    assert m["efficiency"] == pytest.approx((2 / 3 + 1) / 2 * 100)
    assert out.by_category["attention"]["APR"] == 100.0 and out.by_category["counting"]["APR"] == 0.0
    assert out.pending_judgements == 0


def test_vtc_without_judges_rule_failures_are_pending() -> None:
    o = DictOracle({})
    out = vtc.PROFILE.score(vtc_items(), ScoreContext(oracle=o))
    assert out.metrics["APR"] == 50.0 and out.pending_judgements == 2
    assert {r.judge for r in o.pending} == {"vtc-mcq-extract", "vtc-open-judge"}


# ------------------------------------------------------------------ ATP


def plan(tool, k, valid=True):
    return ev(
        "plan_call", {"tool_name": tool, "description": "d", "params": {}, "raw": "", "valid": valid, "position": k}
    )


def test_atp_metrics() -> None:
    gt1 = 'text <tool>{"tool_name": "Reference", "params": {"img_index": 1}}</tool> more <tool>{"tool_name": "Search"}</tool>'
    one = item(
        {"category": "Recipe", "query": "q1", "source_record": {"gt": gt1}},
        [plan("Reference", 0), plan("Diffusion", 1), answer("a1")],
        traj_id=1,
    )
    two = item(
        {"category": "Travel", "query": "q2", "source_record": {"gt": '<tool>{"tool_name": "Search"}</tool>'}},
        [plan("Search", 0), answer("a2")],
        traj_id=2,
    )
    all_true = {
        k: True
        for k in (
            "necessity",
            "semantic_position",
            "structural_integrity",
            "tool_choice",
            "parameter_accuracy",
            "format_correctness",
        )
    }

    class O(DictOracle):
        def ask(self, req):
            key = (req.judge, req.target_part, req.target_id)
            table = {
                ("atp-precision", "precision", 1): ja(
                    parsed={"calls": [{"index": 0, **all_true}, {"index": 1, **all_true, "necessity": False}]}
                ),
                ("atp-recall", "recall", 1): ja(parsed={"missed": [{"where": "x"}], "missed_count": 1}),
                ("atp-chief", "chief", 1): ja(score=70.0, parsed={"score": 70}),
                ("atp-precision", "precision", 2): ja(parsed={"calls": [{"index": 0, **all_true}]}),
                ("atp-recall", "recall", 2): ja(parsed={"missed": []}),
                ("atp-chief", "chief", 2): ja(score=90.0, parsed={"score": 90}),
            }
            return table.get(key)

    out = atp.PROFILE.score([one, two], ScoreContext(oracle=O({})))
    m = out.metrics
    # Headline = the paper's Avg over categories (Recipe SR 50, Travel SR 100); the query means beside it.
    assert m["FS"] == 80.0 and m["SR"] == 75.0 and m["MI"] == 0.5
    assert m["FS_query_mean"] == 80.0 and m["SR_query_mean"] == pytest.approx(200 / 3) and m["MI_query_mean"] == 0.5
    assert m["1a_necessity"] == pytest.approx(200 / 3) and m["2c_format_correctness"] == 100.0
    assert m["tool_f1"] == pytest.approx(75.0)  # (0.5 + 1) / 2, macro over queries
    assert m["tool_adoption"] == {"reference": 50.0, "diffusion": 50.0, "search": 50.0, "code": 0.0, "edit": 0.0}
    assert m["tool_success_rate"]["diffusion"] == 0.0 and m["tool_success_rate"]["search"] == 100.0
    assert "calls_histogram" not in m and out.usage.calls_histogram == {"1": 1, "2": 1}  # one histogram
    assert out.by_category["Recipe"]["FS"] == 70.0


def atp_with_chief(score):
    """One ATP item whose inspectors answered and whose Chief Judge gave ``score``."""
    one = item({"category": "Recipe", "query": "q", "source_record": {"gt": ""}}, [answer("a")], traj_id=1)

    class O(DictOracle):
        def ask(self, req):
            if req.judge == "atp-chief":
                return ja(score=score, parsed={"score": score})
            return ja(parsed={"calls": [], "missed": []})

    return atp.PROFILE.score([one], ScoreContext(oracle=O({})))


@pytest.mark.parametrize("score", [150.0, -1.0, None])
def test_atp_chief_score_outside_0_100_is_pending_not_a_score(score) -> None:
    out = atp_with_chief(score)
    assert out.metrics["FS"] is None and out.pending_judgements == 1
    assert "0–100" in atp.PROFILE.item_pending(out.per_item[0])


def test_atp_chief_score_on_the_bounds_counts() -> None:
    assert atp_with_chief(100.0).metrics["FS"] == 100.0 and atp_with_chief(0.0).metrics["FS"] == 0.0


def test_atp_paper_avg_is_the_unweighted_mean_of_categories() -> None:
    """Three queries in one category scoring 60 and one in another scoring 100: the paper's Avg is 80, the
    query mean 70."""
    items = [
        item(
            {"category": "A" if k < 3 else "B", "query": f"q{k}", "source_record": {"gt": ""}}, [answer("a")], traj_id=k
        )
        for k in range(4)
    ]

    class O(DictOracle):
        def ask(self, req):
            if req.judge == "atp-chief":
                s = 60.0 if req.target_id < 3 else 100.0
                return ja(score=s, parsed={"score": s})
            return ja(parsed={"calls": [], "missed": []})

    m = atp.PROFILE.score(items, ScoreContext(oracle=O({}))).metrics
    assert m["FS"] == 80.0 and m["FS_query_mean"] == 70.0


def test_isg_output_images_come_from_the_answer_event_assets() -> None:
    blocks = [
        {"type": "text", "content": "washing"},
        {"type": "image", "content": "out/1.png"},
        {"type": "image", "content": "out/2.png"},
    ]
    it = isg_item(1, "Prediction", blocks)
    it.events[0]["assets"] = [31, 32]  # what the loader puts there from EventAsset rows
    o = DictOracle({})
    isg.PROFILE.score([it], ScoreContext(oracle=o))
    assert next(r for r in o.pending if r.target_part == "image:2").images == (32,)


def test_isg_category_table_faithful_prints_every_category_as_the_reference() -> None:
    """calculate_performance.py prints all eight categories, 0.0000 for an empty one, under its own names."""
    items = isg_items()
    faithful = isg.PROFILE.score(items, ScoreContext(oracle=isg_oracle()))
    assert list(faithful.by_category) == [isg.REFERENCE_CATEGORY.get(c, c) for c in isg.SUM_CATEGORY]
    assert "Style Transer" in faithful.by_category and "Style Transfer" not in faithful.by_category
    empty = [c for c, v in faithful.by_category.items() if v["items"] == 0]
    assert empty and all(
        faithful.by_category[c] == {"items": 0, "structure": 0.0, "image": 0.0, "block": 0.0, "holistic": 0.0}
        for c in empty
    )
    fixed = isg.PROFILE.score(items, ScoreContext(oracle=isg_oracle(), mode="fixed"))
    assert all(v["items"] for v in fixed.by_category.values()) and "isg-category-table" in fixed.corrections
