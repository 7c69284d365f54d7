"""Agentic-MME conformance: run the reference ``evaluation/eval_runs_search.py`` from the user's checkout
on exported run folders, and put its numbers and chainmark's side by side in one shape.

Both sides become ``{"metrics": {name: value}, "items": {run_folder: {metric: value}}}`` with the
reference's own names and rounding (``overall_scores`` keys, ``L1.avg_S``, ``overthink.pct_optimal``,
``tool_usage.crop``…), so a diff is a plain comparison. The reference runs in its own Python as a
subprocess and writes into the folders it scores, so it gets a copy. Its judges (visual, search) are
reached at ``judge_base_url``; without one, a local endpoint that answers every request with an empty
message stands in, so each judged check fails, as chainmark counts an unjudged check. (Not a refusal:
the reference substring-matches its error text, ``Error: Error code: 400 …``, against the expected
answer, so an error message passes checks whose answer it happens to contain.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from evaluation.scoring.results import ScoreResult

EVALUATOR = Path("evaluation") / "eval_runs_search.py"
# The reference's judges get no answer here (``_Silent``), so chainmark's side is scored without the run's
# verdicts too: with them, every judged check would differ for that reason alone.
REFERENCE_IS_JUDGED = False
ITEM_KEYS = ("S", "V", "R", "penalty", "PQS", "correct", "effective_tool_calls", "reference_tool_calls")


# ------------------------------------------------------------------ running the reference


class _Silent(BaseHTTPRequestHandler):
    """A chat-completions endpoint whose every answer is empty: no verdict, no text to match."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = json.dumps(
            {
                "id": "chainmark-no-judge",
                "object": "chat.completion",
                "created": 0,
                "model": "none",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _runs_root(export_dir: Path) -> Path:
    """The folder that holds one sub-folder per task: ``export_dir/runs`` if present, else ``export_dir``."""
    for cand in (export_dir / "runs", export_dir):
        if cand.is_dir() and any(
            (d / "run_meta.json").exists() or (d / "orig.png").exists() for d in cand.iterdir() if d.is_dir()
        ):
            return cand
    raise FileNotFoundError(f"{export_dir}: no Agentic-MME run folders (each holds run_meta.json or orig.png)")


def _task_json_dirs(export_dir: Path, runs: Path) -> list[Path]:
    """Where task files may be: in the export, or its sibling ``dataset/`` (``chainmark conformance``'s layout)."""
    return [
        d
        for d in (
            export_dir / "json",
            export_dir / "dataset" / "json",
            runs.parent / "json",
            export_dir.parent / "dataset" / "json",
        )
        if d.is_dir()
    ]


def _point_at_tasks(runs: Path, json_dirs: list[Path]) -> None:
    """A run_meta whose ``task_file`` does not exist here is pointed at ``json/<folder>.json`` if that exists."""
    for d in runs.iterdir():
        meta_file = d / "run_meta.json"
        if not meta_file.is_file():
            continue
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if not isinstance(meta, dict) or Path(str(meta.get("task_file") or "")).is_file():
            continue
        for jd in json_dirs:
            cand = jd / f"{d.name}.json"
            if cand.is_file():
                meta["task_file"] = str(cand.resolve())
                meta_file.write_text(json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8")
                break


def run_reference(
    export_dir: Path,
    reference: Path,
    python: str,
    *,
    judge_base_url: str | None = None,
    judge_model: str = "gpt-4o-mini",
    judge_api_key: str = "conformance",
    timeout: float = 3600,
) -> dict:
    """Run the reference evaluator on a copy of the run folders; returns its ``--out_json`` document."""
    script = Path(reference) / EVALUATOR
    if not script.is_file():
        raise FileNotFoundError(f"{reference}: not an Agentic-MME checkout (no {EVALUATOR})")
    export_dir = Path(export_dir)
    runs = _runs_root(export_dir)
    json_dirs = _task_json_dirs(export_dir, runs)
    server = None
    if judge_base_url is None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Silent)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        judge_base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        with tempfile.TemporaryDirectory(prefix="chainmark-amme-ref-") as tmp:
            copy = Path(tmp) / "runs" / runs.name
            shutil.copytree(runs, copy)
            _point_at_tasks(copy, json_dirs)
            # No --out_json: with it the reference fails after scoring (it then reads a variable only its
            # default-path branch sets); by default it writes runs/scores/<mode>_<model>_scored.json under cwd.
            proc = subprocess.run(
                [
                    python,
                    str(script.resolve()),
                    "--runs_dir",
                    str(copy),
                    "--judge_model",
                    judge_model,
                    "--api_key",
                    judge_api_key,
                    "--base_url",
                    judge_base_url,
                ],
                cwd=str(tmp),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            found = sorted((Path(tmp) / "runs" / "scores").glob("*_scored.json"))
            out = found[0] if found else Path(tmp) / "missing.json"
            if proc.returncode != 0 or not out.is_file():
                raise RuntimeError(f"reference evaluator failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
            doc = json.loads(out.read_text(encoding="utf-8"))
            doc["_stdout"] = proc.stdout
            return doc
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


def reference_conformance(export_dir: Path, reference: Path, python: str, **judge: Any) -> dict:
    """The conformance hook: the reference's numbers for ``export_dir`` in the common shape."""
    return reference_view(run_reference(Path(export_dir), Path(reference), python, **judge))


# ------------------------------------------------------------------ the common shape


def _flatten(prefix: str, values: dict[str, Any], out: dict[str, Any]) -> None:
    for k, v in (values or {}).items():
        if isinstance(v, dict):
            _flatten(f"{prefix}{k}.", v, out)
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v


def reference_view(doc: dict[str, Any]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    _flatten("", doc.get("overall_scores") or {}, metrics)
    for level, vals in (doc.get("level_scores") or {}).items():
        _flatten(f"{level}.", vals or {}, metrics)
    _flatten("overthink.", doc.get("overthink_analysis") or {}, metrics)
    metrics["count"] = doc.get("count")
    items: dict[str, dict[str, Any]] = {}
    for r in doc.get("results") or []:
        ev = r.get("eval") or {}
        sc, eff = ev.get("scores") or {}, ev.get("efficiency") or {}
        items[Path(str(r.get("run_dir"))).name] = {
            "S": sc.get("S"),
            "V": sc.get("V"),
            "R": sc.get("R"),
            "penalty": sc.get("penalty"),
            "PQS": sc.get("PQS"),
            "correct": bool((ev.get("final_answer_accuracy") or {}).get("correct")),
            "effective_tool_calls": eff.get("effective_tool_calls"),
            "reference_tool_calls": eff.get("reference_tool_calls"),
        }
    return {"metrics": metrics, "items": items}


def _ratio(pct: Any) -> float:
    return round(pct / 100, 4) if isinstance(pct, (int, float)) else 0.0


def _scores_view(m: dict[str, Any]) -> dict[str, Any]:
    """One block of chainmark's metrics under the reference's names, scale and rounding."""
    n = m.get("total_cases") or 0
    usage = m.get("tool_usage") or {}
    out = {
        "total_cases": n,
        "avg_S": _ratio(m.get("S")),
        "avg_V": _ratio(m.get("V")),
        "total_s_cases": m.get("total_s_cases"),
        "total_v_cases": m.get("total_v_cases"),
        "final_answer_accuracy": _ratio(m.get("Acc")),
        "final_answer_correct_count": m.get("final_answer_correct_count"),
        "avg_penalty": round(m.get("avg_penalty") or 0.0, 4),
        "total_tool_calls": m.get("total_tool_calls"),
        "avg_tool_calls_per_case": round(m.get("avg_tool_calls_per_case") or 0.0, 2),
        "unique_tool_types": len(usage),
        "perfect_cases": m.get("perfect_cases"),
        "checkpoint_pass_rate_50": _ratio(m.get("checkpoint_pass_rate_50")),
        "checkpoint_pass_rate_80": _ratio(m.get("checkpoint_pass_rate_80")),
        "cases_pass_50_checkpoints": m.get("cases_pass_50_checkpoints"),
        "cases_pass_80_checkpoints": m.get("cases_pass_80_checkpoints"),
    }
    out.update({f"tool_usage.{k}": v for k, v in usage.items()})
    return out


def chainmark_view(res: ScoreResult) -> dict[str, Any]:
    """A chainmark score result (``score --json --per-item``) in the reference's shape and names."""
    m = res.metrics
    n = m.get("total_cases") or 0
    metrics = _scores_view(m)
    metrics.update(
        {
            "search_checkpoints_total": m.get("search_checkpoints_total"),
            "search_checkpoints_passed": m.get("search_checkpoints_passed"),
            "search_checkpoint_pass_rate": _ratio(m.get("search_checkpoint_pass_rate")),
        }
    )
    for level, vals in res.by_category.items():
        metrics.update({f"{level}.{k}": v for k, v in _scores_view(vals).items()})
    o = m.get("overthink") or {}
    ref_total, model_total = o.get("human_total_reference_calls") or 0, o.get("model_total_calls") or 0
    over = {
        "human_total_reference_calls": ref_total,
        "human_avg_reference_calls": round(ref_total / n, 2) if n else 0,
        "human_total_s_checkpoints": o.get("human_total_s_checkpoints"),
        "human_avg_s_checkpoints": round((o.get("human_total_s_checkpoints") or 0) / n, 2) if n else 0,
        "model_total_calls": model_total,
        "model_avg_calls": round(model_total / n, 2) if n else 0,
        "total_excess_calls": model_total - ref_total,
        "avg_excess_calls": round((model_total - ref_total) / n, 2) if n else 0,
        "avg_overthink_ratio": round(o.get("avg_overthink_ratio") or 0, 2),
        "cases_overthink": o.get("cases_overthink"),
        "cases_underthink": o.get("cases_underthink"),
        "cases_optimal": o.get("cases_optimal"),
        "cases_exceeded_max": o.get("cases_exceeded_max"),
        "pct_overthink": round(o.get("pct_overthink") or 0, 1),
        "pct_underthink": round(o.get("pct_underthink") or 0, 1),
        "pct_optimal": round(o.get("pct_optimal") or 0, 1),
    }
    over.update({f"human_tool_usage.{k}": v for k, v in (o.get("human_tool_usage") or {}).items()})
    metrics.update({f"overthink.{k}": v for k, v in over.items()})
    metrics["count"] = n
    items: dict[str, dict[str, Any]] = {}
    for row in res.per_item:
        if "dropped" in row:
            continue
        sc, eff = row.get("scores") or {}, row.get("efficiency") or {}
        items[str(row.get("source_id"))] = {
            "S": sc.get("S"),
            "V": sc.get("V"),
            "R": sc.get("R"),
            "penalty": sc.get("penalty"),
            "PQS": sc.get("PQS"),
            "correct": bool((row.get("final_answer_accuracy") or {}).get("correct")),
            "effective_tool_calls": eff.get("effective_tool_calls"),
            "reference_tool_calls": eff.get("reference_tool_calls"),
        }
    return {"metrics": metrics, "items": items}


def diff(ours: dict[str, Any], theirs: dict[str, Any], tol: float = 1e-9) -> dict[str, Any]:
    """Metric and item differences between two views (missing on one side counts as a difference)."""

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
            return a == b
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return abs(a - b) <= tol
        return a == b

    metrics = {
        k: (ours["metrics"].get(k), theirs["metrics"].get(k))
        for k in sorted(set(ours["metrics"]) | set(theirs["metrics"]))
        if not same(ours["metrics"].get(k), theirs["metrics"].get(k))
    }
    items: dict[str, dict[str, Any]] = {}
    for key in sorted(set(ours["items"]) | set(theirs["items"])):
        a, b = ours["items"].get(key), theirs["items"].get(key)
        if a is None or b is None:
            items[key] = {"present": (a is not None, b is not None)}
            continue
        d = {k: (a.get(k), b.get(k)) for k in ITEM_KEYS if not same(a.get(k), b.get(k))}
        if d:
            items[key] = d
    return {"metrics": metrics, "items": items}
