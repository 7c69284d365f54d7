"""GTA metrics on hand-built runs; expected values worked out by hand from the reference formulas."""

from __future__ import annotations

import pytest

from evaluation.benchmarks.base import ScoreContext
from evaluation.benchmarks.gta import PROFILE
from evaluation.scoring.embedding import HashingEmbedder
from tests.scoring.builders import answer, call, ev, item, res


def tc(name, args, **extra):
    return {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}],
        **extra,
    }


def tool(name, text="x"):
    return {"role": "tool", "name": name, "content": {"type": "text", "content": text}}


FISH = {
    "files": [{"type": "image", "path": "image/image_96.jpg"}],
    "dialogs": [
        {"role": "user", "content": "How many days?"},
        tc("OCR", {"image": "image/image_96.jpg"}),
        tool("OCR"),
        tc("Calculator", {"expression": "290 / 5"}),
        tool("Calculator", "58"),
        {"role": "assistant", "content": "58"},
    ],
    "gt_answer": {"whitelist": [["58"]], "blacklist": None},
}
CAT = {
    "dialogs": [
        {"role": "user", "content": "Draw a cat"},
        tc("TextToImage", {"keywords": "cat"}),
        tool("TextToImage"),
        {"role": "assistant", "content": "done"},
    ],
    "gt_answer": None,
}
MINUS = {
    "dialogs": [{"role": "user", "content": "x?"}, {"role": "assistant", "content": "-3"}],
    "gt_answer": {"whitelist": [["-3"]], "blacklist": None},
}


def step(i, pred):
    return ev("step_prediction", {"gold_index": i, "prediction": pred})


def step_items():
    a = item(
        {"source_record": FISH},
        [
            step(0, tc("OCR", {"image": "/data/gta/image/image_96.jpg"})),  # same file, absolute path
            step(1, tc("Calculator", {"expression": "290/5"})),  # arguments differ
            step(2, {"role": "assistant", "content": "The answer is 58 days"}),
        ],
        traj_id=1,
    )
    b = item(
        {"source_record": CAT},
        [
            step(0, tc("TextToImage", {"keywords": "cat"}, error={"type": "ActionError", "msg": "x"})),
            step(1, {"role": "assistant", "content": "here"}),
        ],
        traj_id=2,
    )
    c = item({"source_record": MINUS}, [step(0, {"role": "assistant", "content": "-3"})], traj_id=3)
    return [a, b, c]


def test_step_mode_faithful_quirks() -> None:
    out = PROFILE.score(step_items(), ScoreContext(mode="faithful", run_mode="step"))
    m = out.metrics
    # tool turns: 2 + 1 = 3; answers counted only for truthy refs: fish, minus = 2
    # aligned: fish 3, cat 1 (the errored tool step does not align, its answer turn does), minus 1 = 5
    assert m["InstAcc"] == pytest.approx(5 / (3 + 2) * 100)  # 100 despite an errored step
    assert m["ToolAcc"] == pytest.approx(100.0)  # tool_acc ignores the error flag
    assert m["ArgAcc"] == pytest.approx(1 / 3 * 100)  # exact compare: the absolute path is not the gold's path
    assert m["SummAcc"] == pytest.approx(1 / 2 * 100)  # "-3" does not match under \b
    assert (m["tool_call"], m["tool_call_error"]) == (3, 1)
    assert out.mode == "faithful"


def test_step_mode_fixed() -> None:
    out = PROFILE.score(step_items(), ScoreContext(mode="fixed", run_mode="step"))
    m = out.metrics
    assert m["InstAcc"] == pytest.approx(5 / 6 * 100)  # every gold turn in the denominator
    assert m["SummAcc"] == pytest.approx(100.0)
    assert m["ArgAcc"] == pytest.approx(2 / 3 * 100)  # the absolute path maps to the task file
    assert out.corrections == ["gta-alias-lookaround", "gta-instacc-all-turns", "gta-path-normalise"]


def e2e_items():
    one = item(
        {"source_record": FISH},
        [
            call("OCR", {"image": "image/image_96.jpg"}, "c1"),
            res("OCR", "c1", "290 SOFTGELS"),
            call("Calculator", {"expression": "290/5"}, "c2"),
            res("Calculator", "c2", "58"),
            call("GoogleSearch", {"query": "fish oil"}, "c3"),
            res("GoogleSearch", "c3", "..."),
            answer("It lasts 58 days."),
        ],
        traj_id=1,
    )
    two = item(
        {"source_record": CAT},
        [
            call("TextToImage", {"keywords": "blue dog"}, "d1"),
            res("TextToImage", "d1"),
            call("TextToImage", {"keywords": "cat"}, "d2"),
            res("TextToImage", "d2"),
            answer("done"),
        ],
        traj_id=2,
    )
    three = item(
        {"source_record": {"dialogs": [tc("DrawBox", {"image": "a.jpg", "bbox": "(1,2,3,4)"})], "gt_answer": None}},
        [answer("I cannot")],
        traj_id=3,
    )
    return [one, two, three]


def test_e2e_answer_accuracy_and_tool_f1() -> None:
    out = PROFILE.score(e2e_items(), ScoreContext(mode="faithful", run_mode="atomic", embedder_factory=HashingEmbedder))
    m = out.metrics
    assert m["AnsAcc"] == pytest.approx(100.0)
    # Ans+I over all 3: fish 1 + cat (last TextToImage call has the gold args → cos 1) + DrawBox never called 0
    assert m["AnsAcc+I"] == pytest.approx(200 / 3, abs=1e-4)
    p = 1 / (1 + 1e-5)
    f1_full = 2 * p * 1 / (p + 1 + 1e-5) * 100
    assert m["P"] == pytest.approx(f1_full) and m["L"] == pytest.approx(f1_full)
    assert m["O"] == 0.0  # DrawBox gold, GoogleSearch predicted, no hit
    pc = 1 / (2 + 1e-5)  # two TextToImage predictions, one hit (membership, not multiset)
    assert m["C"] == pytest.approx(2 * pc * 1 / (pc + 1 + 1e-5) * 100)
    assert m["tool_call"] == 5
    assert out.embedder == "hashing-bow-v1-d512"
    assert out.usage.calls_histogram == {"0": 1, "2": 1, "3": 1}


def test_e2e_subjective_answer_uses_clipped_cosine() -> None:
    it = item(
        {"source_record": {"dialogs": [], "gt_answer": ["a red sports car", "a car"]}}, [answer("a red sports car")]
    )
    m = PROFILE.score([it], ScoreContext(run_mode="atomic", embedder_factory=HashingEmbedder)).metrics
    assert m["AnsAcc"] == pytest.approx(100.0, abs=1e-3)


def test_native_opencompass_record_is_scored_verbatim() -> None:
    native = {
        "gold": [tc("OCR", {"image": "/abs/i.jpg"}), {"role": "assistant", "content": "7"}],
        "prediction": [tc("OCR", {"image": "/abs/i.jpg"}), {"role": "assistant", "content": "7 apples"}],
    }
    it = item(
        {"source_record": {"gt_answer": {"whitelist": [["7"]], "blacklist": None}}}, [], trajectory={"native": native}
    )
    m = PROFILE.score([it], ScoreContext(run_mode="step")).metrics
    assert (m["InstAcc"], m["ArgAcc"], m["SummAcc"]) == (100.0, 100.0, 100.0)
