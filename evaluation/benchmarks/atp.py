"""ATP-Bench profile, from the paper (§4.3, §5.2, App. B.1); the reference code is not public.

- FS: the Chief Judge's 0–100 score. The headline FS, SR and MI are the paper's "Avg" (Tables 3–5): the
  unweighted mean of the per-category values; ``FS_query_mean`` (and SR's, MI's) average over queries instead.
  A chief score outside 0–100, or none, is not a score: the item stays pending.
- SR: share of planned tool calls the Precision Inspector marks successful — a call succeeds only
  if all six checks pass (1a necessity, 1b semantic position, 1c structural integrity, 2a tool
  choice, 2b parameter accuracy, 2c format correctness); the six pass rates are reported too, also
  per tool.
- MI: missed images per query, from the Recall Inspector.
- Tool adoption rate per tool (share of queries using it at least once), call-count distribution (one:
  ``usage.calls_histogram``, valid planned calls per query),
  and tool-set precision/recall/F1 against the ground-truth answer's tools (macro over queries).
No faithful/fixed difference exists here (nothing to be faithful to); results say so.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from evaluation.benchmarks.base import ScoreContext, mean, pct, result, set_prf, usage_stats
from evaluation.scoring.results import ScoreResult
from evaluation.scoring.items import Item, JudgeRequest
from store import safe_json

PRECISION, RECALL, CHIEF = "atp-precision", "atp-recall", "atp-chief"
SUB_METRICS = (
    ("1a", "necessity"),
    ("1b", "semantic_position"),
    ("1c", "structural_integrity"),
    ("2a", "tool_choice"),
    ("2b", "parameter_accuracy"),
    ("2c", "format_correctness"),
)
TOOLS = ("reference", "diffusion", "search", "code", "edit")
HEADLINE_AVG = ("FS", "SR", "MI")  # headline metrics reported as the paper's Avg over categories
_TAG = re.compile(r"<tool>(.*?)</tool>", re.S)


def canonical_tool(name: Any) -> str:
    return str(name or "").strip().lower()


def plan_calls(item: Item) -> list[dict[str, Any]]:
    return [e.get("payload") or {} for e in item.events if e["kind"] == "plan_call"]


def answer_text(item: Item) -> str:
    for e in reversed(item.events):
        if e["kind"] == "answer":
            p = e.get("payload") or {}
            return str(p.get("raw") or p.get("text") or "")
    return str(item.trajectory.get("final_answer") or "")


def gt_tools(item: Item) -> set[str]:
    """Tools of the ground-truth answer: ``<tool>{json}</tool>`` tags in ``source_record.gt``, else the chain."""
    gt = item.source.get("gt")
    names: set[str] = set()
    if isinstance(gt, str):
        for body in _TAG.findall(gt):
            try:
                names.add(canonical_tool(safe_json.loads(body).get("tool_name")))
            except (json.JSONDecodeError, AttributeError):
                m = re.search(r'"tool_name"\s*:\s*"([^"]+)"', body)
                if m:
                    names.add(canonical_tool(m.group(1)))
    elif isinstance(gt, list):
        names = {canonical_tool(c.get("tool_name")) for c in gt if isinstance(c, dict)}
    if not names:
        names = {canonical_tool(s["tool_name"]) for s in item.reference_steps if s.get("tool_name")}
    return {n for n in names if n}


def chief_score_valid(score: Any) -> bool:
    """The Chief Judge scores 0–100: anything else (missing, 150, -3) is an unusable verdict, not a score."""
    return isinstance(score, (int, float)) and not isinstance(score, bool) and 0 <= score <= 100


def paper_avg(by_cat: dict[str, dict[str, Any]], key: str) -> float | None:
    """The paper's "Avg": the unweighted mean of the category values that exist."""
    return mean([float(m[key]) for m in by_cat.values() if m.get(key) is not None])


def documents_text(item: Item) -> str:
    docs = item.source.get("doc")
    if isinstance(docs, list):
        return "\n\n".join(str(d if not isinstance(d, dict) else d.get("text") or json.dumps(d)) for d in docs)
    return str(docs or "")


class ATPProfile:
    name = "atp"
    formats = ("atp", "atp-bench")
    judges = (PRECISION, RECALL, CHIEF)
    item_judge = CHIEF  # the per-item score is this judge's verdict: ATP answers are judged, not auto-scored

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult:
        per_item = []
        pending = 0
        call_rows: list[dict[str, Any]] = []
        for it in items:
            traj = int(it.trajectory.get("id") or 0)
            base = {"query": it.task.get("query") or "", "documents": documents_text(it), "answer": answer_text(it)}
            row: dict[str, Any] = {
                "trajectory_id": traj,
                "task_id": it.task.get("id"),
                "category": it.task.get("category") or "uncategorised",
            }
            calls = plan_calls(it)
            prec = ctx.oracle.ask(JudgeRequest.make(PRECISION, traj, "precision", base))
            rec = ctx.oracle.ask(JudgeRequest.make(RECALL, traj, "recall", base))
            pending += (prec is None) + (rec is None)
            if prec is not None and isinstance(prec.parsed, dict):
                judged = prec.parsed.get("calls") or []
                for k, call in enumerate(calls):
                    verdict = next((c for c in judged if isinstance(c, dict) and c.get("index") == k), None)
                    if verdict is None and k < len(judged) and isinstance(judged[k], dict) and "index" not in judged[k]:
                        verdict = judged[k]
                    flags = {name: bool((verdict or {}).get(name)) for _, name in SUB_METRICS}
                    call_rows.append(
                        {
                            "trajectory_id": traj,
                            "tool": canonical_tool(call.get("tool_name")),
                            "category": row["category"],
                            "success": verdict is not None and all(flags.values()),
                            **flags,
                        }
                    )
                row["precision_judged"] = True
            if rec is not None and isinstance(rec.parsed, dict):
                missed = rec.parsed.get("missed_count")
                if not isinstance(missed, (int, float)):
                    missed = len(rec.parsed.get("missed") or [])
                row["missed_images"] = float(missed)
            if prec is not None and rec is not None:
                chief = ctx.oracle.ask(
                    JudgeRequest.make(
                        CHIEF,
                        traj,
                        "chief",
                        {**base, "precision_report": prec.raw_output or "", "recall_report": rec.raw_output or ""},
                    )
                )
                if chief is None or not chief_score_valid(chief.score):
                    pending += 1
                    row["chief_unusable"] = chief is not None
                else:
                    row["final_score"] = chief.score
            pred = {canonical_tool(c.get("tool_name")) for c in calls if c.get("valid", True)}
            p, r, f = set_prf(pred, gt_tools(it))
            row.update(tools=sorted(pred), calls=len(calls), tool_precision=p, tool_recall=r, tool_f1=f)
            per_item.append(row)

        def agg(rows: list[dict[str, Any]], calls: list[dict[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {
                "items": len(rows),
                "FS": mean([r["final_score"] for r in rows if "final_score" in r]),
                "SR": pct(sum(c["success"] for c in calls), len(calls)),
                "MI": mean([r["missed_images"] for r in rows if "missed_images" in r]),
                "tool_precision": mean([r["tool_precision"] * 100 for r in rows]),
                "tool_recall": mean([r["tool_recall"] * 100 for r in rows]),
                "tool_f1": mean([r["tool_f1"] * 100 for r in rows]),
                "judged_calls": len(calls),
            }
            for code, name in SUB_METRICS:
                out[f"{code}_{name}"] = pct(sum(c[name] for c in calls), len(calls))
            return out

        metrics = agg(per_item, call_rows)
        adoption = Counter(t for r in per_item for t in r["tools"])
        metrics["tool_adoption"] = {t: pct(adoption.get(t, 0), len(per_item)) for t in TOOLS} if per_item else {}
        metrics["tool_success_rate"] = {
            t: pct(sum(c["success"] for c in call_rows if c["tool"] == t), sum(1 for c in call_rows if c["tool"] == t))
            for t in TOOLS
        }
        cats: dict[str, list[dict[str, Any]]] = {}
        for r in per_item:
            cats.setdefault(str(r["category"]), []).append(r)
        by_cat = {c: agg(rows, [x for x in call_rows if x["category"] == c]) for c, rows in sorted(cats.items())}
        for key in HEADLINE_AVG:
            metrics[f"{key}_query_mean"] = metrics[key]
            metrics[key] = paper_avg(by_cat, key)
        return result(
            self.name,
            ctx,
            metrics,
            by_category=by_cat,
            per_item=per_item,
            pending=pending,
            usage=usage_stats(items),
            notes=[
                "ATP metrics follow the paper; no reference code exists, "
                "so faithful and fixed modes give the same numbers",
                "FS, SR and MI are the paper's Avg (unweighted mean of the category values); "
                "FS_query_mean, SR_query_mean and MI_query_mean average over queries",
            ],
        )

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: the Chief Judge's 0–100 score, scaled."""
        return float(row["final_score"]) / 100 if isinstance(row.get("final_score"), (int, float)) else None

    def item_pending(self, row: dict[str, Any]) -> str:
        """Why the Chief Judge's verdict is not in this item's score ("" when it is)."""
        if isinstance(row.get("final_score"), (int, float)):
            return ""
        if row.get("chief_unusable"):
            return f"{CHIEF}'s verdict has no score in 0–100: judge it again"
        if "precision_judged" not in row or "missed_images" not in row:
            return f"no verdict yet (asked after {PRECISION} and {RECALL})"
        return "no verdict yet"


PROFILE = ATPProfile()
