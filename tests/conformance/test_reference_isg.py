"""ISG against ``ISG-eval.py`` + ``calculate_performance.py`` run from a checkout: set ``CHAINMARK_REFERENCE_ISG``
to the Dongping-Chen/ISG checkout and ``CHAINMARK_REFERENCE_PYTHON`` to a Python with its packages
(``openai``, ``pyyaml``, ``tqdm``, ``numpy``, ``pillow``); skipped otherwise. The judges answer from the
generator's scripted replies over HTTP; the reference gets the same replies replayed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.conformance.gen_isg import judge_reply, sets
from tests.conformance import test_isg_quirks as quirks
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.support.must import must

REFERENCE = os.environ.get("CHAINMARK_REFERENCE_ISG")
pytestmark = pytest.mark.skipif(
    not REFERENCE, reason="CHAINMARK_REFERENCE_ISG (a checkout of Dongping-Chen/ISG) is not set"
)


def test_generated_set_scores_equal_the_reference_per_item(db_path, tmp_path: Path) -> None:
    from tui.cli import cli

    s = sets(tmp_path / "gen", 300)[0]
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "isg", str(s["dataset"])], env=env).exit_code == 0
    out = runner.invoke(
        cli,
        ["import-run", "isg", str(s["run"]), "-b", "isg", "--root", s["options"]["root"], "--drop-last", "--json"],
        env=env,
    )
    assert out.exit_code == 0, out.output
    run_id = str(json.loads(out.output)["run_id"])
    with ScriptedOpenAI(handler=lambda req: text(judge_reply(req.messages))) as server:
        assert (
            runner.invoke(cli, ["endpoints", "add", "j", "--base-url", server.base_url, "-m", "m"], env=env).exit_code
            == 0
        )
        for name in ("isg-image", "isg-block", "isg-holistic"):
            assert runner.invoke(cli, ["judge", run_id, "--judge", name, "--endpoint", "j"], env=env).exit_code == 0
    out = runner.invoke(cli, ["conformance", "isg", run_id, "--reference", must(REFERENCE), "--json"], env=env)
    report = json.loads(out.output[out.output.index("{") :])
    assert out.exit_code == 0, [report["items"][:10], report["notes"]]
    assert report["ok"] and report["items_compared"] >= 250 * 4 and len(report["metrics"]) == 32
    assert any("ISG-eval.py failed" in n for n in report["notes"])  # the nasty cases did reach the reference
    assert not any("no chainmark verdict" in n for n in report["notes"])


def test_hand_made_quirks_have_the_values_the_tests_assert(tmp_path: Path) -> None:
    """The values in test_isg_quirks.py, from the reference itself (the driver on the same items and replies)."""
    from PIL import Image

    from evaluation.conformance.runner import DRIVERS, default_python, run_driver

    root = tmp_path / "root"
    for rel in ("images/g1.png", "images/g2.png", "gen/a.png", "gen/b.png"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (len(rel), 3, 7)).save(root / rel)
    good = [quirks.GOOD[0], {"type": "image", "content": "gen/a.png"}, {"type": "image", "content": "gen/b.png"}]
    missing = [good[0], {"type": "image", "content": "gen/nowhere.png"}, good[2]]
    cases = {  # id: (replies, output, image_qa, expected)
        "fenced": (
            {
                "image:0": '```json\n{"Judge": "Yes"}\n```',
                "block:0:score": '```json\n{"Judge": 2}\n```',
                "holistic": '```json\n{"overall_score": 8}\n```',
            },
            good,
            quirks.IMAGES,
            {"structure": 1, "image": 0.0, "block": 6.0, "holistic": 1},
        ),
        "boolblock": (
            {"block:0:score": '{"Judge": true}', "block:1:score": '{"Judge": 7}'},
            good,
            quirks.IMAGES,
            {"structure": 1, "image": 1 / 3, "block": 4.0, "holistic": 7},
        ),
        "nullblock": (
            {"block:0:score": "null", "block:1:score": '{"Judge": 9}'},
            good,
            quirks.IMAGES,
            {"structure": 1, "image": 1 / 3, "block": 1, "holistic": 7},
        ),
        "boolimage": ({"image:0": '{"Judge": true}'}, good, quirks.IMAGES, quirks.ERROR_DEFAULTS),
        "emptyqa": ({}, good, {}, quirks.ERROR_DEFAULTS),
        "holfalse": (
            {"holistic": '{"overall_score": false}'},
            good,
            quirks.IMAGES,
            {"structure": 1, "image": 1 / 3, "block": 7.0, "holistic": 0},
        ),
        "missing": ({}, missing, quirks.IMAGES, quirks.ERROR_DEFAULTS),
    }
    gt, preds, replies = [], [], {}
    for cid, (rep, output, qa, _) in cases.items():
        line = {
            "id": cid,
            "Category": "Prediction",
            "Query": [{"type": "text", "content": "Next?"}],
            "Golden": quirks.GOLDEN,
            "predict": {"block_qa": quirks.BLOCKS, "image_qa": qa},
        }
        gt.append(line)
        preds.append({**line, "output": output})
        replies[cid] = {**quirks.NORMAL, **rep}
    for name, rows in (("gt.jsonl", gt), ("preds.jsonl", preds)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
    out = run_driver(
        default_python(),
        DRIVERS / "isg_driver.py",
        [
            "--reference",
            must(REFERENCE),
            "--gt",
            str(tmp_path / "gt.jsonl"),
            "--predictions",
            str(tmp_path / "preds.jsonl"),
            "--root",
            str(root),
            "--replies",
            str(tmp_path / "replies.json"),
        ],
    )
    for cid, (*_, expected) in cases.items():
        got = out["items"][cid]
        assert {k: float(got[k]) for k in expected} == pytest.approx({k: float(v) for k, v in expected.items()}), cid
