"""chainmark's own benchmark format: what an annotator authors, scored with the parts the seed profiles use.

There is no reference evaluator to be faithful to, so faithful and fixed modes give the same numbers and
conformance does not apply. Per trajectory:

- **answer**, by the task's answer spec: ``whitelist`` (GTA's alias matching), ``exact``/``contains``/
  ``numeric`` (with tolerance and variants), ``mcq`` (VTC's rule) → right or wrong; ``references`` → the best
  clipped cosine against them with the run's embedder (GTA's subjective score); ``interleaved`` → the
  benchmark's rubric judge (``chainmark-rubric``, with the rubric its author wrote: ``chainmark rubrics``)
  scores it 0–10; ``none`` → not scored.
- **checkpoints** S / V / R with ordering, by the Agentic-MME engine (``evaluate_process``), when the task
  has checkpoints.
- **the reference chain**, aligned step by step with the model's tool calls, as GTA's step mode compares a
  prediction with the gold step at the same position: the tool chosen, its arguments (equal as JSON), and
  the result used (the gold step's result text reappears in a later model turn or the answer); tool-set
  precision/recall/F1 against the chain's tools; the model's chain length against the reference's.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evaluation.judges.rubrics import RUBRIC_JUDGE
from evaluation.benchmarks.base import ScoreContext, mean, pct, result, set_prf, tool_calls_of, usage_stats
from evaluation.scoring.checkpoints import evaluate_process, tool_use_list
from evaluation.scoring.embedding import simscore
from evaluation.scoring.items import Item, JudgeRequest
from evaluation.scoring.matchers import match_answer_spec
from evaluation.scoring.results import ScoreResult

MATCHED_KINDS = ("whitelist", "exact", "contains", "numeric", "mcq")
CORRECTIONS: dict[str, str] = {}  # no reference evaluator: nothing to correct


def model_calls(item: Item) -> list[dict[str, Any]]:
    """The model's tool calls in order: ``{"name", "arguments"}``."""
    calls = []
    for e in item.events:
        if e["kind"] == "tool_call":
            p = e.get("payload") or {}
            calls.append({"name": str(p.get("name") or ""), "arguments": p.get("arguments")})
    return calls


def later_text(item: Item) -> str:
    """What the model wrote after its calls: thoughts, messages and the answer, joined."""
    parts = []
    for e in item.events:
        p = e.get("payload") or {}
        if e["kind"] in ("thought", "message", "answer"):
            parts.append(str(p.get("text") or p.get("content") or ""))
    return "\n".join(parts)


def _same_args(a: Any, b: Any) -> bool:
    """Arguments equal as JSON values (a JSON string argument is read first, as tool calls carry them)."""

    def norm(v: Any) -> Any:
        if isinstance(v, str):
            try:
                return json.loads(v)
            except json.JSONDecodeError:
                return v
        return v

    return bool(norm(a) == norm(b))


def align_chain(item: Item) -> dict[str, Any] | None:
    """Per gold tool step k: the model's k-th call chose the same tool, with the same arguments, and the gold
    result text reappears in what the model wrote. None when the task has no reference tool step."""
    gold = [s for s in item.reference_steps if s.get("tool_name") and not s.get("is_final")]
    if not gold:
        return None
    calls = model_calls(item)
    text = later_text(item)
    steps = []
    for k, g in enumerate(gold):
        call = calls[k] if k < len(calls) else None
        tool_ok = call is not None and call["name"] == g["tool_name"]
        result = str(g.get("result_text") or "").strip()
        steps.append(
            {
                "tool": tool_ok,
                "arguments": tool_ok and _same_args(call["arguments"] if call else None, g.get("tool_args")),
                "result_used": bool(result) and result in text,
                "has_result": bool(result),
            }
        )
    p, r, f = set_prf({c["name"] for c in calls if c["name"]}, {g["tool_name"] for g in gold})
    return {
        "steps": steps,
        "tool_precision": p,
        "tool_recall": r,
        "tool_f1": f,
        "chain_length": len(calls),
        "reference_length": len(gold),
    }


def score_answer(item: Item, ctx: ScoreContext, traj: int) -> dict[str, Any]:
    """``{"kind", "correct" | "similarity" | "judge_score", "pending"}`` for the task's answer spec."""
    spec = item.task.get("answer_spec") or {"kind": "none"}
    kind = spec.get("kind", "none")
    answer = item.final_answer()
    if kind in MATCHED_KINDS:
        return {"kind": kind, "correct": bool(match_answer_spec(spec, answer, ctx.mode))}
    if kind == "references":
        refs = [r for r in spec.get("references") or [] if isinstance(r, str)]
        return {"kind": kind, "similarity": simscore(ctx.embedder, answer, refs) if refs else 0.0}
    if kind == "interleaved":
        got = ctx.oracle.ask(
            JudgeRequest.make(
                RUBRIC_JUDGE,
                traj,
                "answer",
                {"query": item.task.get("query") or "", "answer": answer, "golden": spec.get("golden") or []},
            )
        )
        if got is None or got.score is None:
            return {"kind": kind, "pending": True}
        return {"kind": kind, "judge_score": float(got.score)}
    return {"kind": kind}


def with_tool_checks(item: Item) -> Item:
    """The item with each V checkpoint that lists tools but names no verifier read as "one of these tools was
    used" (``require_op`` of the first, then the engine's any-listed-tool fallback). In Agentic-MME's own data
    an empty verifier passes unconditionally; an author who lists tools means them."""
    checkpoints = []
    for cp in item.checkpoints:
        verifier = str((cp.get("code_check") or {}).get("verifier") or "").strip()
        if cp.get("axis") == "V" and cp.get("tools") and not verifier:
            cp = {**cp, "code_check": {**(cp.get("code_check") or {}), "verifier": f"require_op:{cp['tools'][0]}"}}
        checkpoints.append(cp)
    return replace(item, checkpoints=checkpoints)


def score_item(item: Item, ctx: ScoreContext) -> dict[str, Any]:
    traj = int(item.trajectory.get("id") or 0)
    row: dict[str, Any] = {
        "trajectory_id": traj,
        "task_id": item.task.get("id"),
        "item_id": str(item.task.get("source_id")),
        "category": item.task.get("category") or "uncategorised",
        "level": str(item.task.get("level") or "unlevelled"),
        "answer": score_answer(item, ctx, traj),
        "tools": tool_calls_of(item),
    }
    if item.checkpoints:
        item = with_tool_checks(item)
        uses, effective = tool_use_list(item, code_mode=(ctx.run_mode == "code"), mode=ctx.mode)
        ev = evaluate_process(item, uses, effective, mode=ctx.mode, oracle=ctx.oracle, answer=item.final_answer())
        row["checkpoints"] = {k: ev["scores"][k] for k in ("S", "V", "R", "PQS")}
        row["_outcomes"] = ev["outcomes"]
        row["checkpoint_pending"] = ev["pending_judgements"]
    chain = align_chain(item)
    if chain is not None:
        row["chain"] = chain
    return row


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Headline metrics over ``rows`` (percentages, like the seed benchmarks' tables)."""
    answers = [r["answer"] for r in rows]
    matched = [a["correct"] for a in answers if "correct" in a]
    steps = [s for r in rows if "chain" in r for s in r["chain"]["steps"]]
    chains = [r["chain"] for r in rows if "chain" in r]
    cps = [r["checkpoints"] for r in rows if "checkpoints" in r]

    def axis(name: str) -> float | None:
        values = [c[name] for c in cps if c.get(name) is not None]
        return mean([v * 100 for v in values])

    return {
        "items": len(rows),
        "AnswerAcc": pct(sum(matched), len(matched)),
        "AnswerSim": mean([a["similarity"] * 100 for a in answers if "similarity" in a]),
        "RubricScore": mean([a["judge_score"] for a in answers if "judge_score" in a]),
        "S": axis("S"),
        "V": axis("V"),
        "R": axis("R"),
        "PQS": axis("PQS"),
        "ToolAcc": pct(sum(s["tool"] for s in steps), len(steps)),
        "ArgAcc": pct(sum(s["arguments"] for s in steps), len(steps)),
        "ResultUse": pct(sum(s["result_used"] for s in steps if s["has_result"]), sum(s["has_result"] for s in steps)),
        "tool_precision": mean([c["tool_precision"] * 100 for c in chains]),
        "tool_recall": mean([c["tool_recall"] * 100 for c in chains]),
        "tool_f1": mean([c["tool_f1"] * 100 for c in chains]),
        "chain_length_ratio": mean([c["chain_length"] / c["reference_length"] for c in chains]),
    }


def _groups(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(str(r[key]), []).append(r)
    return dict(sorted(out.items()))


class NativeProfile:
    name = "chainmark"
    formats = ("chainmark",)
    judges = (RUBRIC_JUDGE,)
    item_judge = None  # answers are auto-scored unless the spec is interleaved

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult:
        per_item = [score_item(it, ctx) for it in items]
        outcomes = [(int(r["trajectory_id"]), o) for r in per_item for o in r.pop("_outcomes", [])]
        pending = sum(bool(r["answer"].get("pending")) + int(r.get("checkpoint_pending") or 0) for r in per_item)
        metrics = aggregate(per_item)
        levels = {f"level {k}": aggregate(v) for k, v in _groups(per_item, "level").items()}
        return result(
            self.name,
            ctx,
            metrics,
            by_category={**{k: aggregate(v) for k, v in _groups(per_item, "category").items()}, **levels},
            per_item=per_item,
            outcomes=outcomes,
            pending=pending,
            usage=usage_stats(items),
            notes=[
                "chainmark's own format: no reference evaluator exists, so faithful and fixed give the same numbers"
            ],
        )

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: right/wrong, the similarity, or the rubric's 0–10."""
        a = row.get("answer") or {}
        if "correct" in a:
            return 1.0 if a["correct"] else 0.0
        if "similarity" in a:
            return float(a["similarity"])
        if "judge_score" in a:
            return float(a["judge_score"]) / 10
        return None

    def item_pending(self, row: dict[str, Any]) -> str:
        """Why the answer has no score ("" when it has one)."""
        a = row.get("answer") or {}
        if a.get("pending"):
            return f"no verdict yet from {RUBRIC_JUDGE}"
        if a.get("kind") == "none":
            return "the task has no answer to score"
        return ""


PROFILE = NativeProfile()
