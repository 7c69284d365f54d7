"""Agentic-MME process scoring on hand-built trajectories (values worked out by hand)."""

from __future__ import annotations

import pytest

from evaluation.benchmarks.agentic_mme import PROFILE
from evaluation.benchmarks.base import ScoreContext
from evaluation.scoring.items import DictOracle
from tests.scoring.builders import answer, call, ev, item, ja, res

CHECKPOINTS = [
    {
        "id": 1,
        "key": "V1",
        "axis": "V",
        "tools": ["crop"],
        "code_check": {"verifier": "verify_crop_ast"},
        "visual_check": {"question": "Is the text readable?", "expected_answer": "yes"},
    },
    {
        "id": 2,
        "key": "S1",
        "axis": "S",
        "tools": ["google_search"],
        "description": "Search the operator (expected to find: 1962)",
    },
    {"id": 3, "key": "V2", "axis": "V", "tools": [], "code_check": {"verifier": "require_op:rotate"}},
    {"id": 4, "key": "V3", "axis": "V", "visual_check": {"question": "Colour?", "expected_answer": "red"}},
    {"id": 5, "key": "VF", "axis": "V", "answer_check": {"match_type": "contains", "target": "1962"}},
    {"id": 6, "key": "R1", "axis": "R", "answer_check": {"match_type": "contains", "target": "1962"}},
]
ORDERING = [
    {"key": "O1", "sequence": ["V1", "S1"], "max_gap": 0},
    {"key": "O2", "sequence": ["S1", "V2"], "max_gap": 5},
]
TASK = {
    "level": "2",
    "reference_tool_calls": 2,
    "max_tool_calls": 6,
    "penalty_per_extra_call": 0.1,
    "source_record": {"golden_answer": {"value": "1962", "match_type": "contains"}},
}


def main_item():
    return item(
        TASK,
        [
            call("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 500]}, "a"),
            res("crop", "a", asset_ids=[11]),
            call("crop", {"image_index": 1, "bbox_2d": [0, 0, 900, 900]}, "b"),
            res("crop", "b", asset_ids=[12]),
            call("google_search", {"query": "airline founded"}, "c"),
            res("google_search", "c", "Founded in 1962 ..."),
            call("enhance", {"image_index": 2, "contrast": 2}, "d"),
            res("enhance", "d", asset_ids=[13]),
            answer("It was founded in 1962."),
        ],
        checkpoints=CHECKPOINTS,
        ordering=ORDERING,
        traj_id=7,
    )


def oracle():
    return DictOracle(
        {
            ("amme-visual", "visual:V1:11"): ja("No", parsed={"answer": "No, too blurry"}),
            ("amme-visual", "visual:V1:12"): ja("Yes", parsed={"answer": "Yes, it reads JA8089"}),
            ("amme-visual", "visual:V3:11"): ja(parsed={"answer": "blue"}),
            ("amme-visual", "visual:V3:12"): ja(parsed={"answer": "blue"}),
            ("amme-visual", "visual:V3:13"): ja(parsed={"answer": "dark blue"}),
            ("amme-search", "search:S1"): ja("PASS", raw="VERDICT: PASS\nREASONING: found 1962"),
        }
    )


def test_process_scores_any_pass_ordering_penalty() -> None:
    o = oracle()
    out = PROFILE.score([main_item()], ScoreContext(mode="faithful", run_mode="atomic", oracle=o))
    row = out.per_item[0]
    cps = row["checkpoint_results"]
    assert cps["V1"]["passed"] and cps["V1"]["hit_index"] == 0
    assert [j["asset_id"] for j in cps["V1"]["visual_check"]["judge_results"]] == [11, 12]  # stops at first pass
    assert cps["S1"]["passed"] and cps["S1"]["hit_index"] == 2
    assert not cps["V2"]["passed"] and not cps["V3"]["passed"]
    assert cps["VF"] == {"axis": "V"}
    scores = row["scores"]
    assert scores["S"] == 1.0 and scores["V"] == pytest.approx(1 / 3)
    assert scores["penalty"] == pytest.approx(0.2)  # 4 calls, 2 reference, 0.1 per extra call
    assert scores["PQS"] == pytest.approx((1 + 1 / 3) / 2 * 0.8)
    assert scores["R"] == 0.0  # O1: gap 2-0-1 = 1 > 0; O2: V2 failed
    assert row["final_answer_accuracy"]["correct"] is True
    m = out.metrics
    assert m["Acc"] == 100.0 and m["S"] == 100.0 and m["V"] == pytest.approx(100 / 3)
    assert m["V_tool"] == 0.0 and m["V_true"] == 50.0  # V2 is tool-only; V1, V3 have visual checks
    assert m["checkpoint_pass_rate_50"] == 100.0 and m["checkpoint_pass_rate_80"] == 0.0  # 3 of 5 passed
    assert m["tool_usage"] == {"crop": 2, "google_search": 1, "enhance": 1}
    ot = m["overthink"]
    assert (ot["cases_overthink"], ot["avg_overthink_ratio"], ot["cases_exceeded_max"]) == (1, 2.0, 0)
    assert set(out.by_category) == {"L2"}
    assert out.pending_judgements == 0 and not o.pending
    # outcomes: one per checkpoint, the matched event of V1 is the first crop call
    by_key = {oc.key: oc for _, oc in out.outcomes}
    assert by_key["V1"].matched_event_id == 1000 and by_key["V1"].method == "judge"
    assert by_key["VF"].passed and by_key["VF"].detail["final_answer_checkpoint"]


def test_missing_verdicts_fail_and_are_reported_pending() -> None:
    out = PROFILE.score([main_item()], ScoreContext(run_mode="atomic"))
    cps = out.per_item[0]["checkpoint_results"]
    assert not cps["V1"]["passed"] and not cps["S1"]["passed"]
    # images are asked one at a time (the first pass ends a visual check): V1's first, V3's first, S1
    assert out.pending_judgements == 1 + 1 + 1


def test_require_op_reuse_is_faithful_and_one_to_one_is_fixed() -> None:
    cps = [
        {"id": 1, "key": "A", "axis": "V", "code_check": {"verifier": "verify_crop_ast"}},
        {"id": 2, "key": "B", "axis": "V", "code_check": {"verifier": "verify_crop_ast"}},
    ]
    it = item(
        {}, [call("crop", {"image_index": 0}, "a"), res("crop", "a", asset_ids=[5]), answer("x")], checkpoints=cps
    )
    faithful = PROFILE.score([it], ScoreContext(mode="faithful")).per_item[0]["scores"]["V"]
    fixed = PROFILE.score([it], ScoreContext(mode="fixed")).per_item[0]["scores"]["V"]
    assert (faithful, fixed) == (1.0, 0.5)


def test_code_mode_order_quirk_changes_the_ordering_constraint() -> None:
    cps = [
        {"id": 1, "key": "Vc", "axis": "V", "code_check": {"verifier": "verify_crop_ast"}},
        {"id": 2, "key": "Ss", "axis": "S", "tools": ["google_search"], "description": "find it"},
    ]
    order = [{"key": "O", "sequence": ["Vc", "Ss"], "max_gap": 1}]
    events = [
        ev(
            "code_exec",
            {
                "code": "...",
                "exit_code": 0,
                "ops": [{"op": "crop", "save": "transformed_image_1.png"}],
                "asset_ids": [9],
            },
        ),
        call("google_search", {"query": "q"}, "s"),
        res("google_search", "s", "ctx"),
        answer("a"),
    ]
    o = DictOracle({("amme-search", "search:Ss"): ja("PASS")})
    faithful = PROFILE.score(
        [item({}, events, checkpoints=cps, ordering=order)], ScoreContext(mode="faithful", run_mode="code", oracle=o)
    ).per_item[0]
    fixed = PROFILE.score(
        [item({}, events, checkpoints=cps, ordering=order)], ScoreContext(mode="fixed", run_mode="code", oracle=o)
    ).per_item[0]
    # faithful list: [search 0, crop op 1, code run 2] → crop after search → order broken
    assert faithful["ordering_results"][0]["indices"] == [1, 0] and faithful["scores"]["R"] == 0.0
    # fixed (chronological): [crop 0, code run 1, search 2] → gap 1 ≤ 1
    assert fixed["ordering_results"][0]["indices"] == [0, 2] and fixed["scores"]["R"] == 1.0
    # effective calls exclude the code run itself
    assert faithful["efficiency"]["effective_tool_calls"] == 2


def test_visual_check_falls_back_to_the_original_image() -> None:
    cps = [{"id": 1, "key": "V", "axis": "V", "visual_check": {"question": "q", "expected_answer": "Yes"}}]
    it = item({}, [answer("a")], checkpoints=cps, task_assets=[{"asset_id": 3, "role": "query_image", "ordinal": 0}])
    o = DictOracle({("amme-visual", "visual:V:3"): ja(parsed={"answer": "yes."})})
    row = PROFILE.score([it], ScoreContext(oracle=o)).per_item[0]
    assert row["checkpoint_results"]["V"]["passed"]
    assert row["checkpoint_results"]["V"]["visual_check"]["fallback_to_original"]


def test_faithful_visual_fallback_is_the_run_folders_own_orig_png() -> None:
    """With no produced image the reference judges ``<run_dir>/orig.png``, not the dataset's image."""
    it = item(
        {"source_id": "0001"},
        [answer("x")],
        checkpoints=[
            {
                "id": 1,
                "key": "V1",
                "axis": "V",
                "visual_check": {"question": "Which colour?", "expected_answer": "blue"},
            }
        ],
        task_assets=[{"asset_id": 5, "role": "query_image", "ordinal": 0}],
        native_assets={"orig.png": 7, "tool_use_list.json": 8},
    )
    oracle = DictOracle(
        {("amme-visual", "visual:V1:7"): ja(raw="mostly blue"), ("amme-visual", "visual:V1:5"): ja(raw="mostly red")}
    )
    faithful = PROFILE.score([it], ScoreContext(mode="faithful", oracle=oracle))
    assert faithful.per_item[0]["scores"]["V"] == 1.0
    fixed = PROFILE.score([it], ScoreContext(mode="fixed", oracle=oracle))
    assert fixed.per_item[0]["scores"]["V"] == 0.0


def test_faithful_visual_check_with_an_empty_expected_answer_passes_unjudged() -> None:
    """The reference tests ``expected in answer``: with ``""`` expected any answer, an error text too, passes;
    faithful passes it without a verdict, fixed still asks the judge (no verdict: failed, pending)."""
    it = item(
        {"source_id": "0001"},
        [answer("x")],
        checkpoints=[
            {"id": 1, "key": "V1", "axis": "V", "visual_check": {"question": "Which colour?", "expected_answer": " "}}
        ],
        task_assets=[{"asset_id": 5, "role": "query_image", "ordinal": 0}],
        native_assets={"orig.png": 7},
    )
    faithful = PROFILE.score([it], ScoreContext(mode="faithful"))
    assert faithful.per_item[0]["scores"]["V"] == 1.0 and faithful.pending_judgements == 0
    fixed = PROFILE.score([it], ScoreContext(mode="fixed"))
    assert fixed.per_item[0]["scores"]["V"] == 0.0 and fixed.pending_judgements == 1
