"""The ISG driver without the real checkout: a stand-in laid out like Dongping-Chen/ISG (our own few lines,
same file, function and local names) shows that each judge call is routed to chainmark's reply for its item
and question, over HTTP through the real ``openai`` client, and that unanswered questions are counted."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.conformance.runner import DRIVERS, run_driver

VQA = """
import json, yaml
from openai import OpenAI

class VQA_Model:
    def __init__(self, model_name=None, config_path="./ISG_eval/config.yaml"):
        with open(config_path) as f:
            self.config = yaml.safe_load(f)

    def generate_answer(self, content):
        try:
            client = OpenAI(base_url=self.config["base_url"], api_key=self.config["api_key"])
            text = client.chat.completions.create(model="m", messages=[{"role": "user", "content": content}])
            text = text.choices[0].message.content
        except Exception:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return {"error": text}
"""
EVAL = """
import argparse, json
from ISG_eval.vqa_model import VQA_Model

def evaluate_image(gt_item, vqa):
    out = []
    for ii in gt_item["predict"]["image_qa"]:
        ii["judge"] = vqa.generate_answer([{"type": "text", "text": ii["Question"]}])
        out.append(ii)
    return out

def evaluate_block(gt_item, vqa):
    out = []
    for i in gt_item["predict"]["block_qa"]["questions"]:
        for judge_type in ("Score", "Yes_No"):
            i["VQA_judge_" + judge_type] = vqa.generate_answer([{"type": "text", "text": i["Question"]}])
        out.append(i)
    return out

def evaluate_response(item, vqa):
    return vqa.generate_answer([{"type": "text", "text": "overall"}])

def main():
    ap = argparse.ArgumentParser()
    for a in ("--model", "--input_file", "--GT_file", "--output_file", "--root"):
        ap.add_argument(a)
    ap.add_argument("--start", type=int)
    ap.add_argument("--end", type=int)
    args = ap.parse_args()
    vqa = VQA_Model(args.model)
    gt = {g["id"]: g for g in map(json.loads, open(args.GT_file))}
    items = [json.loads(x) for x in open(args.input_file)][args.start:args.end]
    with open(args.output_file, "a") as f:
        for item in items:
            g = gt[item["id"]]
            item["result"] = {"structure": True, "image": evaluate_image(g, vqa), "block": evaluate_block(g, vqa),
                              "holistic": evaluate_response(item, vqa)}
            f.write(json.dumps(item) + "\\n")
"""
PERF = """
import json

def read_input_file(path):
    return [json.loads(x) for x in open(path)]

def analyze_data(data):
    stats = {"Temporal Prediction": {"structure": 0, "image": [], "block": [], "holistic": [], "total": 0}}
    for item in data:
        s = stats["Temporal Prediction"]
        s["total"] += 1
        s["structure"] += 1
        r = item["result"]
        s["image"].append(sum((q.get("judge") or {}).get("Judge") == "Yes" for q in r["image"]) / len(r["image"]))
        scores = [q["VQA_judge_Score"]["Judge"] for q in r["block"] if q.get("VQA_judge_Score")]
        s["block"].append(sum(scores) / len(scores) if scores else 1)
        s["holistic"].append((r["holistic"] or {}).get("overall_score", 1))
    return stats
"""


def stand_in(root: Path) -> Path:
    ref = root / "ISG"
    (ref / "ISG_eval").mkdir(parents=True)
    (ref / "ISG_eval" / "__init__.py").write_text("")
    (ref / "ISG_eval" / "vqa_model.py").write_text(VQA)
    (ref / "ISG_eval" / "task_few_shot.json").write_text("{}")
    (ref / "ISG-eval.py").write_text(EVAL)
    (ref / "calculate_performance.py").write_text(PERF)
    return ref


def test_each_judge_call_gets_chainmarks_reply_for_its_item_and_question(tmp_path: Path) -> None:
    ref = stand_in(tmp_path)
    predict = {
        "image_qa": [{"id": 0, "Question": "a?"}, {"id": 5, "Question": "b?"}],
        "block_qa": {"questions": [{"Question": "x"}, {"Question": "y"}]},
    }
    lines = [{"id": i, "Category": "Prediction", "predict": predict, "output": []} for i in ("a", "b")]
    for name in ("gt.jsonl", "preds.jsonl"):
        (tmp_path / name).write_text("".join(json.dumps(x) + "\n" for x in lines))
    replies = {
        "a": {
            "image:0": '{"Judge": "Yes"}',
            "image:5": '{"Judge": "No"}',
            "block:0:score": '{"Judge": 2}',
            "block:1:score": '{"Judge": 6}',
            "block:0:yes_no": "{}",
            "block:1:yes_no": "{}",
            "holistic": '{"overall_score": 9}',
        },
        "b": {"image:5": '{"Judge": "Yes"}', "block:1:score": '{"Judge": 10}', "holistic": "{}"},
    }
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    import sys

    out = run_driver(
        sys.executable,
        DRIVERS / "isg_driver.py",
        [
            "--reference",
            str(ref),
            "--gt",
            str(tmp_path / "gt.jsonl"),
            "--predictions",
            str(tmp_path / "preds.jsonl"),
            "--root",
            str(tmp_path),
            "--replies",
            str(tmp_path / "replies.json"),
        ],
    )
    assert out["items"]["a"] == {"structure": 1, "image": 0.5, "block": 4.0, "holistic": 9}
    assert out["items"]["b"] == {"structure": 1, "image": 0.5, "block": 10.0, "holistic": 1}
    assert out["unanswered"] == 4  # b: image:0, block:0:score, block:0:yes_no, block:1:yes_no
    assert out["metrics"]["Temporal_Prediction.block"] == 7.0
