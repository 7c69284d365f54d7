"""Run ISG-Bench's ``ISG-eval.py`` + ``calculate_performance.py`` from a checkout on exported prediction lines.

Runs in the reference's own Python (it needs ``openai``, ``yaml``, ``tqdm``, ``numpy``, ``PIL``), never
imports chainmark, and prints one line ``CHAINMARK-CONFORMANCE-RESULT <json>``:
``{"metrics": {"<Category>.<metric>": v}, "items": {id: {"structure", "image", "block", "holistic"}},
"errors": {id: message}, "unanswered": n}``.

The judges: the reference's own client code runs unchanged, but the ``OpenAI`` class its VQA module
uses is replaced at run time by a factory that points a real ``openai`` client at a local replay server
and tags each request with the item and the question it is about (read from the reference's own
evaluation frames: the image question ``ii``, the block question ``i`` and requirement ``judge_type``).
The server answers with the raw reply chainmark's judge got for the same (item, question), from
``--replies`` (``{item_id: {target_part: raw_text}}``); a question chainmark never asked gets HTTP 400,
which the reference treats as a failed call. Configuration (``./ISG_eval/config.yaml``, read from the
working folder) is ours: one try, no delay. Per-item values are the aggregation's own lists for a
one-item input; the metrics are its lists for the whole input, averaged as it prints them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MARK = "CHAINMARK-CONFORMANCE-RESULT "
FRAMES = ("evaluate_image", "evaluate_block", "evaluate_response")


class Replies:
    def __init__(self, table: dict) -> None:
        self.table = {str(k): v for k, v in table.items()}
        self.unanswered: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def get(self, item: str, part: str):
        reply = (self.table.get(item) or {}).get(part)
        if reply is None:
            with self.lock:
                self.unanswered.append((item, part))
        return reply


def serve(replies: Replies) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            reply = replies.get(self.headers.get("X-Chainmark-Item", ""), self.headers.get("X-Chainmark-Part", ""))
            if reply is None:
                status, body = 400, {"error": {"message": "chainmark has no verdict for this question"}}
            else:
                status, body = (
                    200,
                    {
                        "id": "replay",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "replay",
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}
                        ],
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                    },
                )
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def which_question() -> tuple[str, str]:
    """(item id, chainmark target part) of the judge call being made, from the reference's frames."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_name
        if name in FRAMES:
            loc = frame.f_locals
            if name == "evaluate_image":
                return str(loc["gt_item"]["id"]), f"image:{loc['ii'].get('id')}"
            if name == "evaluate_block":
                questions = loc["gt_item"]["predict"]["block_qa"]["questions"]
                index = next(n for n, q in enumerate(questions) if q is loc["i"])
                which = "score" if loc["judge_type"] == "Score" else "yes_no"
                return str(loc["gt_item"]["id"]), f"block:{index}:{which}"
            return str(loc["item"]["id"]), "holistic"
        frame = frame.f_back
    return "", ""


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def item_values(stats: dict) -> dict | None:
    """The one category the aggregation counted a one-item input under, as that item's values."""
    for s in stats.values():
        if s["total"]:
            return {
                "structure": s["structure"],
                "image": s["image"][0] if s["image"] else None,
                "block": s["block"][0] if s["block"] else None,
                "holistic": s["holistic"][0] if s["holistic"] else None,
            }
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--gt", required=True)
    ap.add_argument("--predictions", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--replies", required=True)
    args = ap.parse_args()
    reference = Path(args.reference).resolve()
    gt, preds, root = (str(Path(p).resolve()) for p in (args.gt, args.predictions, args.root))
    replies = Replies(json.loads(Path(args.replies).read_text(encoding="utf-8")))
    server = serve(replies)
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"

    work = Path(tempfile.mkdtemp(prefix="isg-conformance-"))
    (work / "ISG_eval").mkdir()
    (work / "ISG_eval" / "config.yaml").write_text(
        'api_key: "conformance"\nbase_url: "http://127.0.0.1:9/v1"\nmodel_name: "replay"\ntemperature: 0\n'
        'site_url: ""\nsite_name: ""\nmax_retries: 1\nretry_delay: 0\n',
        encoding="utf-8",
    )
    os.symlink(reference / "ISG_eval" / "task_few_shot.json", work / "ISG_eval" / "task_few_shot.json")
    os.chdir(work)
    sys.path.insert(0, str(reference))

    import openai

    def client(**kwargs):
        item, part = which_question()
        return openai.OpenAI(
            base_url=base_url,
            api_key="conformance",
            max_retries=0,
            default_headers={"X-Chainmark-Item": item, "X-Chainmark-Part": part},
        )

    lines = [ln for ln in Path(preds).read_text(encoding="utf-8").splitlines() if ln.strip()]
    out_file = work / "judged.jsonl"
    noise = io.StringIO()
    with contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise):
        evaluator = load(reference / "ISG-eval.py", "isg_eval_reference")
        import ISG_eval.vqa_model as vqa

        vqa.OpenAI = client
        sys.argv = [
            "ISG-eval.py",
            "--model",
            "replay",
            "--input_file",
            preds,
            "--GT_file",
            gt,
            "--output_file",
            str(out_file),
            "--root",
            root,
            "--start",
            "0",
            "--end",
            str(len(lines)),
        ]
        evaluator.main()
        perf = load(reference / "calculate_performance.py", "isg_calculate_performance")
        judged = perf.read_input_file(str(out_file)) if out_file.exists() else []
        gt_data = [json.loads(ln) for ln in Path(gt).read_text(encoding="utf-8").splitlines() if ln.strip()]
        categories = {g["id"]: g["Category"] for g in gt_data}
        for item in judged:  # what its main() does before analysing
            if item["id"] in categories:
                item["Category"] = categories[item["id"]]
        stats = perf.analyze_data(judged)
        items, errors = {}, {}
        for item in judged:
            values = item_values(perf.analyze_data([json.loads(json.dumps(item))]))
            if values is not None:
                items[str(item["id"])] = values
            err = (item.get("result") or {}).get("error") if isinstance(item.get("result"), dict) else None
            if err:
                errors[str(item["id"])] = err
    metrics = {}
    for cat, s in stats.items():
        name = cat.replace(" ", "_")
        metrics[f"{name}.structure"] = s["structure"] / s["total"] if s["total"] else 0
        for key in ("image", "block", "holistic"):
            metrics[f"{name}.{key}"] = sum(s[key]) / len(s[key]) if s[key] else 0
    server.shutdown()
    print(
        MARK
        + json.dumps(
            {
                "metrics": metrics,
                "items": items,
                "errors": errors,
                "unanswered": len(replies.unanswered),
                "unanswered_sample": replies.unanswered[:10],
            },
            default=str,
        )
    )


if __name__ == "__main__":
    try:
        main()
    except Exception:  # the runner shows stderr's tail
        traceback.print_exc()
        sys.exit(2)
