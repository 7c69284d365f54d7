"""GTA (General Tool Agents) profile: the OpenCompass ``GTABenchEvaluator`` numbers, bit for bit.

Step-by-step runs (Run.mode ``step``): InstAcc, ToolAcc, ArgAcc, SummAcc. End-to-end runs: AnsAcc,
AnsAcc+I and the P/O/L/C tool-selection F1. Faithful mode keeps the reference's quirks: the ``\\b``
alias regex (``-3`` never matches), InstAcc's denominator (tool turns + samples with a textual
answer, while null-answer samples' final turns still add to the numerator), and its missing-gold
rules. Fixed mode uses look-around alias matching and counts every gold turn in InstAcc.

Gold dialogs come from the imported GTA record (``source_record.dialogs``) when present, else from
the reference chain. A trajectory whose ``native`` holds an OpenCompass prediction record
(``{"gold": …, "prediction": …}``) is scored from that record, exactly as OpenCompass would.
ArgAcc compares arguments exactly, as the reference does (its gold holds the loader's absolute image
paths and predictions are never rewritten); fixed mode maps any path that ends with a task file's
relative path to that relative path first (correction ``gta-path-normalise``).

A predicted step with ``"tool_calls": []`` makes the reference raise IndexError; chainmark scores it as
a turn without a tool call (an answer turn) in both modes and says so in the notes.

Optional: a GTA-2-style checkpoint judge (``gta-checkpoint``, 0–10 per leaf checkpoint, weighted
mean up the tree) when such verdicts exist.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from evaluation.benchmarks.base import ScoreContext, UsageCounter, pct, result
from evaluation.scoring.results import ScoreResult
from evaluation.scoring.embedding import clipped_cosine, simscore
from evaluation.scoring.items import Item, JudgeRequest
from evaluation.scoring.matchers import gta_iscorrect

CATEGORIES = {
    "perception": ("OCR", "ImageDescription", "RegionAttributeDescription", "TextToBbox"),
    "operation": ("DrawBox", "AddText", "GoogleSearch"),
    "logic": ("Calculator", "Solver", "Plot", "MathOCR", "CountGivenObject"),
    "creativity": ("TextToImage", "ImageStylization"),
}
IMAGEGEN_TOOLS = ("DrawBox", "AddText", "Plot", "TextToImage", "ImageStylization")
CHECKPOINT_JUDGE = "gta-checkpoint"
CORRECTIONS = {
    "gta-alias-lookaround": "whitelist/blacklist aliases match with look-arounds instead of \\b, so aliases "
    "that start or end with a non-word character (-3, $5, 3.) can match",
    "gta-instacc-all-turns": "InstAcc divides by every gold turn (the reference divides by tool turns + samples "
    "with a textual answer)",
    "gta-path-normalise": "ArgAcc maps image paths ending in a task file's relative path to that path before "
    "comparing (the reference compares arguments exactly)",
}


def tool_type(name: str) -> str:
    for cat, names in CATEGORIES.items():
        if name in names:
            return cat
    return "none"


def response_type(step: dict[str, Any]) -> tuple[str, Any]:
    if step.get("tool_calls"):
        return "tool", step["tool_calls"][0]["function"]
    if "tool_calls" in step and step.get("role", "assistant") == "assistant":  # [] or null: the reference crashes
        return "answer", step.get("content")
    if step.get("role") == "assistant":
        return "answer", step.get("content")
    return "tool_return", step.get("content")


# ------------------------------------------------------------------ gold and predictions from an item


def gold_reference(item: Item) -> Any:
    """GTA's ``gt_answer``: a whitelist dict, a list of reference answers, or None."""
    if "gt_answer" in item.source:
        return item.source["gt_answer"]
    spec = item.task.get("answer_spec") or {}
    if spec.get("kind") == "whitelist":
        return {"whitelist": spec.get("groups") or [], "blacklist": spec.get("blacklist")}
    if spec.get("kind") == "references":
        return list(spec.get("references") or [])
    if spec.get("kind") in ("exact", "contains", "numeric"):
        return {"whitelist": [[str(spec.get("value"))] + list(spec.get("variants") or [])], "blacklist": None}
    return None


def gold_dialogs(item: Item) -> list[dict[str, Any]]:
    """The gold messages after the user turn (assistant tool calls, tool returns, final answer)."""
    dialogs = item.source.get("dialogs")
    if isinstance(dialogs, list) and dialogs:
        return [m for m in dialogs if m.get("role") != "user"]
    out: list[dict[str, Any]] = []
    for s in item.reference_steps:
        if s.get("is_final"):
            out.append({"role": "assistant", "content": s.get("final_answer") or ""})
        elif s.get("tool_name"):
            out.append(
                {
                    "role": "assistant",
                    "thought": s.get("thought"),
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": s["tool_name"], "arguments": s.get("tool_args") or {}},
                        }
                    ],
                }
            )
            out.append(
                {
                    "role": "tool",
                    "name": s["tool_name"],
                    "content": {"type": "text", "content": s.get("result_text") or ""},
                }
            )
    return out


def file_aliases(item: Item) -> list[str]:
    paths = [f.get("path") for f in item.source.get("files") or [] if isinstance(f, dict)]
    paths += [a.get("original_path") for a in item.task_assets]
    return sorted({p for p in paths if p}, key=len, reverse=True)


def canonical_args(args: Any, aliases: list[str]) -> Any:
    if not isinstance(args, dict) or not aliases:
        return args
    out = {}
    for k, v in args.items():
        if isinstance(v, str):
            for rel in aliases:
                if v == rel or v.endswith("/" + rel):
                    v = rel
                    break
        out[k] = v
    return out


def _canon_step(step: dict[str, Any], aliases: list[str]) -> dict[str, Any]:
    if not step.get("tool_calls") or not aliases:
        return step
    fn = step["tool_calls"][0]["function"]
    return {
        **step,
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": fn.get("name"), "arguments": canonical_args(fn.get("arguments"), aliases)},
            }
        ],
    }


def step_predictions(item: Item, n_gold: int) -> list[dict[str, Any]]:
    """One predicted step per gold assistant turn (STEP_PREDICTION events by gold_index)."""
    by_index: dict[int, dict[str, Any]] = {}
    for e in item.events_of("step_prediction"):
        p = e.get("payload") or {}
        by_index[int(p.get("gold_index", len(by_index)))] = p.get("prediction") or {}
    missing = {"role": "assistant", "content": "", "error": {"type": "missing", "msg": "no prediction recorded"}}
    return [by_index.get(k, missing) for k in range(n_gold)]


def e2e_predictions(item: Item) -> list[dict[str, Any]]:
    """The predicted steps of an end-to-end run in GTA's prediction format, built from events."""
    steps: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for e in item.events:
        if e["kind"] == "tool_result":
            results[str((e.get("payload") or {}).get("call_id") or "")] = e
    answered = False
    for e in item.events:
        p = e.get("payload") or {}
        if e["kind"] == "tool_call":
            step: dict[str, Any] = {
                "role": "assistant",
                "tool_calls": [
                    {"type": "function", "function": {"name": p.get("name"), "arguments": p.get("arguments")}}
                ],
            }
            res = results.get(str(p.get("call_id") or "")) if p.get("call_id") else None
            if e.get("failed") or (res is not None and not (res.get("payload") or {}).get("ok", True)):
                err = (res or {}).get("payload", {}).get("error") if res else None
                step["error"] = {"type": "tool_error", "msg": err or "call failed"}
            steps.append(step)
        elif e["kind"] == "tool_result":
            steps.append({"role": "tool", "content": [{"type": "text", "content": p.get("text") or ""}]})
        elif e["kind"] == "answer":
            steps.append({"role": "assistant", "content": p.get("text") or ""})
            answered = True
    if not answered and item.trajectory.get("final_answer"):
        steps.append({"role": "assistant", "content": item.trajectory["final_answer"]})
    return steps


def _native(item: Item) -> tuple[list[Any], list[Any]] | None:
    nat = item.native
    if isinstance(nat, dict) and isinstance(nat.get("prediction"), list) and isinstance(nat.get("gold"), list):
        return nat["prediction"], nat["gold"]
    return None


# ------------------------------------------------------------------ the two evaluators


STEP_COUNTS = (
    "metrics.inst_align",
    "metrics.tool_acc",
    "metrics.arg_acc",
    "metrics.answer_acc",
    "metrics.tool_call",
    "metrics.tool_call_error",
    "total.tool",
    "total.answer",
)
EMPTY_CALLS_NOTE = (
    "{n} predicted step(s) carry an empty tool_calls list; the reference raises IndexError on them, "
    "chainmark scores them as turns without a tool call"
)


def score_step(items: list[Item], ctx: ScoreContext) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    acc = StepScores(ctx)
    acc.add(items)
    return acc.finish()


class StepScores:
    """The step-by-step evaluator over items given a chunk at a time (counters summed in item order, so
    the numbers are those of one pass over all of them)."""

    def __init__(self, ctx: ScoreContext):
        self.ctx = ctx
        self.total = {"tool": 0, "answer": 0}
        self.m = {
            "inst_align": 0.0,
            "tool_acc": 0.0,
            "arg_acc": 0.0,
            "answer_acc": 0.0,
            "tool_call": 0,
            "tool_call_error": 0,
        }
        self.gold_turns = 0
        self.empty_calls = 0
        self.per_item: list[dict[str, Any]] = []

    def add(self, items: list[Item]) -> None:
        ctx, total, m, per_item = self.ctx, self.total, self.m, self.per_item
        gold_turns, empty_calls = self.gold_turns, self.empty_calls
        for it in items:
            ref = gold_reference(it)
            aliases = file_aliases(it)
            native = _native(it)
            if native is not None:
                preds, gts = native
            else:
                gts = [g for g in gold_dialogs(it) if g.get("role") == "assistant"]
                preds = step_predictions(it, len(gts))
            c = dict.fromkeys(STEP_COUNTS, 0.0)
            if ref:
                c["total.answer"] += 1
            steps: list[dict[str, Any]] = []  # per gold turn, what this scorer decided (the trajectory viewer's marks)
            row: dict[str, Any] = {
                "trajectory_id": it.trajectory.get("id"),
                "task_id": it.task.get("id"),
                "item_id": str(it.task.get("source_id")),
                "aligned": 0,
                "turns": 0,
                "counts": c,
                "steps": steps,
            }
            pairs = list(zip(preds, gts))
            gold_turns += len(gts) if ctx.mode == "fixed" else len(pairs)
            for k, (pred, gt) in enumerate(pairs):
                if (
                    aliases
                    and any(_canon_step(x, aliases) != x for x in (pred, gt))
                    and ctx.correct("gta-path-normalise")
                ):
                    pred, gt = _canon_step(pred, aliases), _canon_step(gt, aliases)
                if "tool_calls" in pred and not pred.get("tool_calls"):
                    empty_calls += 1
                ptype, p_ = response_type(pred)
                gtype, g_ = response_type(gt)
                row["turns"] += 1
                if ptype == gtype and "error" not in pred:
                    c["metrics.inst_align"] += 1
                    row["aligned"] += 1
                if gtype == "tool":
                    c["total.tool"] += 1
                if ptype == "tool":
                    c["metrics.tool_call"] += 1
                    if "error" in pred:
                        c["metrics.tool_call_error"] += 1
                step: dict[str, Any] = {"gold_index": k, "gold": gtype, "predicted": ptype, "error": "error" in pred}
                steps.append(step)
                if gtype == "tool":
                    step["tool"] = step["args"] = False
                if ptype == gtype == "tool" and p_.get("name") == g_.get("name"):
                    c["metrics.tool_acc"] += 1
                    step["tool"] = True
                    if p_.get("arguments") == g_.get("arguments"):
                        c["metrics.arg_acc"] += 1
                        step["args"] = True
                elif ptype == gtype == "answer":
                    if isinstance(ref, dict):
                        ok = gta_iscorrect(str(p_ or ""), ref, ctx.mode)
                        if ctx.mode == "fixed" and ok != gta_iscorrect(str(p_ or ""), ref, "faithful"):
                            ctx.correct("gta-alias-lookaround")
                        c["metrics.answer_acc"] += ok
                        row["answer_correct"] = step["answer"] = ok
                    elif isinstance(ref, list):
                        s = simscore(ctx.embedder, str(p_ or ""), ref)
                        c["metrics.answer_acc"] += s
                        row["answer_score"] = step["answer"] = s
            for key, value in c.items():
                bucket, name = key.split(".", 1)
                (total if bucket == "total" else m)[name] += value
            per_item.append(row)
        self.gold_turns, self.empty_calls = gold_turns, empty_calls

    def finish(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
        ctx, total, m, per_item = self.ctx, self.total, self.m, self.per_item
        gold_turns, empty_calls = self.gold_turns, self.empty_calls
        inst_den = gold_turns if ctx.correct("gta-instacc-all-turns") else total["tool"] + total["answer"]
        metrics = {
            "InstAcc": pct(m["inst_align"], inst_den),
            "ToolAcc": pct(m["tool_acc"], total["tool"]),
            "ArgAcc": pct(m["arg_acc"], total["tool"]),
            "SummAcc": pct(m["answer_acc"], total["answer"]),
            "tool_call": int(m["tool_call"]),
            "tool_call_error": int(m["tool_call_error"]),
            "counts": {
                **{k: m[k] for k in ("inst_align", "tool_acc", "arg_acc", "answer_acc")},
                "total_tool": total["tool"],
                "total_answer": total["answer"],
                "inst_denominator": inst_den,
            },
        }
        return metrics, per_item, [EMPTY_CALLS_NOTE.format(n=empty_calls)] if empty_calls else []


E2E_COUNTS = (
    "metrics.answer_acc",
    "metrics.answer_acc_w_imggen",
    "metrics.tool_call",
    "metrics.tool_call_error",
    *(f"metrics.{c}" for c in CATEGORIES),
    "total.all",
    "total.answer",
    *(f"total.{c}" for c in CATEGORIES),
    *(f"total_predict.{c}" for c in CATEGORIES),
)


def _calls(step: dict[str, Any]) -> list[Any] | None:
    """The step's tool calls if it is a tool step (``"tool_calls"`` present), else None."""
    return step["tool_calls"] if "tool_calls" in step else None


def score_e2e(items: list[Item], ctx: ScoreContext) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    acc = E2EScores(ctx)
    acc.add(items)
    return acc.finish()


class E2EScores:
    """The end-to-end evaluator over items given a chunk at a time (counters summed in item order, so
    the numbers are those of one pass over all of them)."""

    def __init__(self, ctx: ScoreContext):
        self.ctx = ctx
        self.totals = dict.fromkeys(E2E_COUNTS, 0.0)
        self.unknown: set[str] = set()
        self.empty_calls = 0
        self.per_item: list[dict[str, Any]] = []

    def add(self, items: list[Item]) -> None:
        ctx, totals, unknown, per_item = self.ctx, self.totals, self.unknown, self.per_item
        empty_calls = self.empty_calls
        for it in items:
            ref = gold_reference(it)
            native = _native(it)
            if native is not None:
                preds = native[0][0] if native[0] else []
                gts = native[1][0] if native[1] else []
            else:
                preds, gts = e2e_predictions(it), gold_dialogs(it)
            c = dict.fromkeys(E2E_COUNTS, 0.0)
            c["total.all"] += 1
            row: dict[str, Any] = {
                "trajectory_id": it.trajectory.get("id"),
                "task_id": it.task.get("id"),
                "item_id": str(it.task.get("source_id")),
                "counts": c,
            }
            if ref:
                c["total.answer"] += 1
            ptype, answer = response_type(preds[-1]) if preds else ("none", None)
            if ref and ptype == "answer" and answer:
                if isinstance(ref, dict):
                    score = float(gta_iscorrect(str(answer), ref, ctx.mode))
                    if ctx.mode == "fixed" and bool(score) != gta_iscorrect(str(answer), ref, "faithful"):
                        ctx.correct("gta-alias-lookaround")
                else:
                    score = simscore(ctx.embedder, str(answer), ref)
                c["metrics.answer_acc"] += score
                c["metrics.answer_acc_w_imggen"] += score
                row["answer_score"] = float(score)
            if not ref:
                last_args: dict[str, Any] = {}
                for p in preds:
                    if _calls(p) and "error" not in p:
                        fn = p["tool_calls"][0]["function"]
                        if fn.get("name") in IMAGEGEN_TOOLS:
                            last_args[fn["name"]] = fn.get("arguments")
                score = 1.0
                for g in gts:
                    if _calls(g):
                        fn = g["tool_calls"][0]["function"]
                        if fn.get("name") in IMAGEGEN_TOOLS:
                            if fn["name"] not in last_args:
                                score = 0.0
                                break
                            score *= clipped_cosine(
                                ctx.embedder, json.dumps(fn.get("arguments")), json.dumps(last_args[fn["name"]])
                            )
                c["metrics.answer_acc_w_imggen"] += score
                row["imggen_score"] = score
            names = []
            for p in preds:
                calls = _calls(p)
                if calls is None:
                    continue
                c["metrics.tool_call"] += 1
                c["metrics.tool_call_error"] += "error" in p
                if not calls:
                    empty_calls += 1
                    continue
                name = calls[0]["function"].get("name")
                names.append(name)
                if tool_type(name) in CATEGORIES:
                    c[f"total_predict.{tool_type(name)}"] += 1
            for g in gts:
                if _calls(g):
                    name = g["tool_calls"][0]["function"].get("name")
                    cat = tool_type(name)
                    if cat == "none":  # the reference crashes (KeyError) here; we skip and say so
                        unknown.add(str(name))
                        continue
                    c[f"total.{cat}"] += 1
                    c[f"metrics.{cat}"] += name in names
            for key, value in c.items():
                totals[key] += value
            per_item.append(row)
        self.empty_calls = empty_calls

    def finish(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
        totals, unknown, per_item, empty_calls = self.totals, self.unknown, self.per_item, self.empty_calls
        f1s: dict[str, Any] = {}
        for cat in CATEGORIES:
            hit, predicted, gold = totals[f"metrics.{cat}"], totals[f"total_predict.{cat}"], totals[f"total.{cat}"]
            precision = hit / (predicted + 1e-5)
            recall = hit / gold if gold else 0.0
            f1 = 2 * precision * recall / (precision + recall + 1e-5) if gold else 0.0
            f1s[cat] = {
                "precision": precision * 100,
                "recall": recall * 100,
                "f1": f1 * 100,
                "hit": int(hit),
                "predicted": int(predicted),
                "gold": int(gold),
            }
        answered = totals["total.answer"]
        metrics = {
            "AnsAcc": (totals["metrics.answer_acc"] / answered * 100) if answered else 0.0,
            "AnsAcc+I": pct(totals["metrics.answer_acc_w_imggen"], totals["total.all"]),
            "P": f1s["perception"]["f1"],
            "O": f1s["operation"]["f1"],
            "L": f1s["logic"]["f1"],
            "C": f1s["creativity"]["f1"],
            "tool_call": int(totals["metrics.tool_call"]),
            "tool_call_error": int(totals["metrics.tool_call_error"]),
            "tool_selection": f1s,
            "counts": {
                "answer_acc": totals["metrics.answer_acc"],
                "answer_acc_w_imggen": totals["metrics.answer_acc_w_imggen"],
                "total_answer": answered,
                "total_all": totals["total.all"],
            },
        }
        notes = []
        if unknown:
            notes.append(
                f"gold calls to tools outside GTA's four categories were skipped (the reference raises "
                f"KeyError): {', '.join(sorted(unknown))}"
            )
        if empty_calls:
            notes.append(EMPTY_CALLS_NOTE.format(n=empty_calls))
        return metrics, per_item, notes


def checkpoint_judge_scores(items: list[Item], ctx: ScoreContext) -> tuple[float | None, int, list[tuple[int, Any]]]:
    """GTA-2: each leaf checkpoint judged 0–10; a parent is the weighted mean of its children."""
    acc = CheckpointJudgeScores(ctx)
    acc.add(items)
    return acc.finish()


class CheckpointJudgeScores:
    """``checkpoint_judge_scores`` over items given a chunk at a time (each chunk asks ``ctx.oracle`` as
    it is when the chunk is added)."""

    def __init__(self, ctx: ScoreContext):
        self.ctx = ctx
        self.roots_scores: list[float] = []
        self.pending = 0
        self.outcomes: list[tuple[int, Any]] = []
        self.any_checkpoints = False

    def finish(self) -> tuple[float | None, int, list[tuple[int, Any]]]:
        roots_scores = self.roots_scores
        return (sum(roots_scores) / len(roots_scores) if roots_scores else None), self.pending, self.outcomes

    def add(self, items: list[Item]) -> None:
        from evaluation.scoring.checkpoints import CheckpointOutcome

        ctx, roots_scores, outcomes = self.ctx, self.roots_scores, self.outcomes
        pending = self.pending
        for it in items:
            if not it.checkpoints:
                continue
            traj = int(it.trajectory.get("id") or 0)
            children: dict[Any, list[dict[str, Any]]] = {}
            for cp in it.checkpoints:
                children.setdefault(cp.get("parent_id"), []).append(cp)
            produced = it.produced_assets()

            def value(cp: dict[str, Any]) -> float | None:
                nonlocal pending
                kids = children.get(cp.get("id"), [])
                if kids:
                    vals = [(value(k), float(k.get("weight") or 1.0)) for k in kids]
                    if any(v is None for v, _ in vals):
                        return None
                    w = sum(wt for _, wt in vals)
                    return sum(v * wt for v, wt in vals) / w if w else None  # type: ignore[operator]
                req = JudgeRequest.make(
                    CHECKPOINT_JUDGE,
                    traj,
                    f"checkpoint:{cp['key']}",
                    {
                        "task": it.task.get("query") or "",
                        "answer": it.final_answer(),
                        "requirement": cp.get("description") or "",
                    },
                    produced,
                )
                got = ctx.oracle.ask(req)
                if got is None or got.score is None:
                    pending += got is None
                    return None
                outcomes.append(
                    (
                        traj,
                        CheckpointOutcome(
                            cp.get("id"),
                            cp["key"],
                            got.score >= 5.0,
                            None,
                            "judge",
                            {"score": got.score, "judge": got.judge_name},
                        ),
                    )
                )
                return got.score

            vals = [value(r) for r in children.get(None, [])]
            if vals and all(v is not None for v in vals):
                roots_scores.extend(vals)  # type: ignore[arg-type]
        self.pending = pending
        self.any_checkpoints = self.any_checkpoints or any(it.checkpoints for it in items)


class GTAProfile:
    name = "gta"
    formats = ("gta",)
    judges = (CHECKPOINT_JUDGE,)

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult:
        return self.score_chunks([items], ctx)

    def score_chunks(self, chunks: Iterable[list[Item]], ctx: ScoreContext) -> ScoreResult:
        """The run's items a chunk at a time, each chunk scored whole before the next is asked for (the
        runner loads a large run this way, so only one chunk's items are in memory). Every sum runs
        over the items in order, so the numbers do not depend on where the chunks are cut."""
        scores = StepScores(ctx) if ctx.run_mode == "step" else E2EScores(ctx)
        judged = CheckpointJudgeScores(ctx)
        usage = UsageCounter()
        for items in chunks:
            scores.add(items)
            judged.add(items)
            usage.add(items)
            del items  # not held while the next chunk loads
        metrics, per_item, notes = scores.finish()
        gpt, pending, outcomes = judged.finish()
        if gpt is not None:
            metrics["checkpoint_judge_score"] = gpt
        return result(
            self.name,
            ctx,
            metrics,
            per_item=per_item,
            outcomes=outcomes,
            notes=notes,
            pending=pending if gpt is not None or judged.any_checkpoints else 0,
            usage=usage.stats(),
        )

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: the answer's score (or correctness), None if unanswered."""
        if isinstance(row.get("answer_score"), (int, float)):
            return float(row["answer_score"])
        if "answer_correct" in row:
            return float(bool(row["answer_correct"]))
        return None


PROFILE = GTAProfile()


# ------------------------------------------------------------------ conformance with OpenCompass's evaluator

REFERENCE_METRICS = {  # the reference's result key -> chainmark's metric
    "inst_align": "InstAcc",
    "tool_acc": "ToolAcc",
    "arg_acc": "ArgAcc",
    "answer_acc": "SummAcc",
    "tool_call": "tool_call",
    "tool_call_error": "tool_call_error",
}
REFERENCE_E2E_METRICS = {
    "answer_acc": "AnsAcc",
    "answer_acc_w_imggen": "AnsAcc+I",
    "p_f1": "P",
    "o_f1": "O",
    "l_f1": "L",
    "c_f1": "C",
    "tool_call": "tool_call",
    "tool_call_error": "tool_call_error",
}
EMBEDDING_VALUES = ("SummAcc", "AnsAcc", "AnsAcc+I", "metrics.answer_acc", "metrics.answer_acc_w_imggen")


def reference_conformance(export_dir: Any, reference: Any, python: str) -> dict[str, Any]:
    """OpenCompass's ``GTABenchEvaluator`` on ``export_dir/gta_bench.json`` + the exported ``dataset.json``
    (``export_dir/../dataset``), run by ``drivers/gta_driver.py`` in ``python``; per-item values are the
    evaluator's own counter increments per sample."""
    from pathlib import Path

    from evaluation.conformance.runner import DRIVERS, EMBEDDER_TOLERANCE, run_driver

    export_dir = Path(export_dir)
    preds = export_dir / "gta_bench.json" if export_dir.is_dir() else export_dir
    dataset = export_dir.parent / "dataset"
    out = run_driver(
        python,
        DRIVERS / "gta_driver.py",
        ["--reference", str(reference), "--dataset", str(dataset), "--predictions", str(preds)],
    )
    names = REFERENCE_E2E_METRICS if out.get("mode") == "every" else REFERENCE_METRICS
    metrics = {ours: out["metrics"][theirs] for theirs, ours in names.items() if theirs in (out.get("metrics") or {})}
    notes = [
        f"reference embedder: {out.get('embedder')} (chainmark's, injected)"
        if out.get("embedder") != "reference"
        else "reference embedder: sentence-transformers all-mpnet-base-v2, as the reference loads it"
    ]
    if out.get("error"):
        notes.append(f"the reference evaluator failed: {out['error']}")
        metrics = {ours: None for ours in names.values()}
    tol = EMBEDDER_TOLERANCE if out.get("embedder") != "reference" else 1e-9
    return {
        "metrics": metrics,
        "items": out.get("items") or {},
        "notes": notes,
        "tolerances": {name: tol for name in EMBEDDING_VALUES},
    }


def conformance_ours(score_result: ScoreResult) -> dict[str, Any]:
    """chainmark's GTA numbers in the conformance shape: the paper metrics and each sample's counters."""
    keep = (*REFERENCE_METRICS.values(), *REFERENCE_E2E_METRICS.values())
    metrics = {k: v for k, v in score_result.metrics.items() if k in keep}
    items = {
        str(r["item_id"]): dict(r.get("counts") or {}) for r in score_result.per_item if r.get("item_id") is not None
    }
    return {"metrics": metrics, "items": items}
