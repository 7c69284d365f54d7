"""GTA (General Tool Agents) profile: the OpenCompass ``GTABenchEvaluator`` numbers, bit for bit.

Step-by-step runs (Run.mode ``step``): InstAcc, ToolAcc, ArgAcc, SummAcc. End-to-end runs: AnsAcc,
AnsAcc+I and the P/O/L/C tool-selection F1. Faithful mode keeps the reference's quirks: the ``\\b``
alias regex (``-3`` never matches), InstAcc's denominator (tool turns + samples with a textual
answer, while null-answer samples' final turns still add to the numerator), and its missing-gold
rules. Fixed mode uses look-around alias matching and counts every gold turn in InstAcc.

Gold dialogs come from the imported GTA record (``source_record.dialogs``) when present, else from
the reference chain. A trajectory whose ``native`` holds an OpenCompass prediction record
(``{"gold": …, "prediction": …}``) is scored from that record, exactly as OpenCompass would.
Image-file arguments are compared after mapping any path that ends with a task file's relative
path to that relative path — the same identity the reference gets by absolutising both sides.

Optional: a GTA-2-style checkpoint judge (``gta-checkpoint``, 0–10 per leaf checkpoint, weighted
mean up the tree) when such verdicts exist.
"""

from __future__ import annotations

import json
from typing import Any

from evaluation.benchmarks.base import ScoreContext, pct, result, usage_stats
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


def tool_type(name: str) -> str:
    for cat, names in CATEGORIES.items():
        if name in names:
            return cat
    return "none"


def response_type(step: dict[str, Any]) -> tuple[str, Any]:
    if "tool_calls" in step:
        return "tool", step["tool_calls"][0]["function"]
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
            out.append({"role": "assistant", "thought": s.get("thought"),
                        "tool_calls": [{"type": "function", "function": {"name": s["tool_name"],
                                                                         "arguments": s.get("tool_args") or {}}}]})
            out.append({"role": "tool", "name": s["tool_name"],
                        "content": {"type": "text", "content": s.get("result_text") or ""}})
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
    if "tool_calls" not in step or not aliases:
        return step
    fn = step["tool_calls"][0]["function"]
    return {**step, "tool_calls": [{"type": "function", "function": {
        "name": fn.get("name"), "arguments": canonical_args(fn.get("arguments"), aliases)}}]}


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
            step: dict[str, Any] = {"role": "assistant", "tool_calls": [
                {"type": "function", "function": {"name": p.get("name"), "arguments": p.get("arguments")}}]}
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


def score_step(items: list[Item], ctx: ScoreContext) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    total = {"tool": 0, "answer": 0}
    m = {"inst_align": 0.0, "tool_acc": 0.0, "arg_acc": 0.0, "answer_acc": 0.0, "tool_call": 0, "tool_call_error": 0}
    gold_turns = 0
    per_item = []
    for it in items:
        ref = gold_reference(it)
        aliases = file_aliases(it)
        native = _native(it)
        if native is not None:
            preds, gts = native
        else:
            gts = [g for g in gold_dialogs(it) if g.get("role") == "assistant"]
            preds = step_predictions(it, len(gts))
        if ref:
            total["answer"] += 1
        row = {"trajectory_id": it.trajectory.get("id"), "task_id": it.task.get("id"), "aligned": 0, "turns": 0}
        pairs = list(zip(preds, gts))
        gold_turns += len(gts) if ctx.mode == "fixed" else len(pairs)
        for pred, gt in pairs:
            pred = _canon_step(pred, aliases)
            gt = _canon_step(gt, aliases)
            ptype, p_ = response_type(pred)
            gtype, g_ = response_type(gt)
            row["turns"] += 1
            if ptype == gtype and "error" not in pred:
                m["inst_align"] += 1
                row["aligned"] += 1
            if gtype == "tool":
                total["tool"] += 1
            if ptype == "tool":
                m["tool_call"] += 1
                if "error" in pred:
                    m["tool_call_error"] += 1
            if ptype == gtype == "tool" and p_.get("name") == g_.get("name"):
                m["tool_acc"] += 1
                if p_.get("arguments") == g_.get("arguments"):
                    m["arg_acc"] += 1
            elif ptype == gtype == "answer":
                if isinstance(ref, dict):
                    ok = gta_iscorrect(str(p_ or ""), ref, ctx.mode)
                    m["answer_acc"] += ok
                    row["answer_correct"] = ok
                elif isinstance(ref, list):
                    s = simscore(ctx.embedder, str(p_ or ""), ref)
                    m["answer_acc"] += s
                    row["answer_score"] = s
        per_item.append(row)
    inst_den = total["tool"] + total["answer"] if ctx.mode == "faithful" else gold_turns
    metrics = {
        "InstAcc": pct(m["inst_align"], inst_den), "ToolAcc": pct(m["tool_acc"], total["tool"]),
        "ArgAcc": pct(m["arg_acc"], total["tool"]), "SummAcc": pct(m["answer_acc"], total["answer"]),
        "tool_call": m["tool_call"], "tool_call_error": m["tool_call_error"],
        "counts": {**{k: m[k] for k in ("inst_align", "tool_acc", "arg_acc", "answer_acc")},
                   "total_tool": total["tool"], "total_answer": total["answer"], "inst_denominator": inst_den},
    }
    return metrics, per_item


def score_e2e(items: list[Item], ctx: ScoreContext) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    total = {"all": 0, "answer": 0, **{c: 0 for c in CATEGORIES}}
    predicted = {c: 0 for c in CATEGORIES}
    hit = {c: 0 for c in CATEGORIES}
    m = {"answer_acc": 0.0, "answer_acc_w_imggen": 0.0, "tool_call": 0, "tool_call_error": 0}
    unknown: set[str] = set()
    per_item = []
    for it in items:
        ref = gold_reference(it)
        native = _native(it)
        if native is not None:
            preds, gts = native[0][0], native[1][0]
        else:
            preds, gts = e2e_predictions(it), gold_dialogs(it)
        total["all"] += 1
        row: dict[str, Any] = {"trajectory_id": it.trajectory.get("id"), "task_id": it.task.get("id")}
        if ref:
            total["answer"] += 1
        ptype, answer = response_type(preds[-1]) if preds else ("none", None)
        if ref and ptype == "answer" and answer:
            score = gta_iscorrect(str(answer), ref, ctx.mode) if isinstance(ref, dict) else \
                simscore(ctx.embedder, str(answer), ref)
            m["answer_acc"] += score
            m["answer_acc_w_imggen"] += score
            row["answer_score"] = float(score)
        if not ref:
            last_args: dict[str, Any] = {}
            for p in preds:
                if "tool_calls" in p and "error" not in p:
                    fn = p["tool_calls"][0]["function"]
                    if fn.get("name") in IMAGEGEN_TOOLS:
                        last_args[fn["name"]] = fn.get("arguments")
            score = 1.0
            for g in gts:
                if "tool_calls" in g:
                    fn = g["tool_calls"][0]["function"]
                    if fn.get("name") in IMAGEGEN_TOOLS:
                        if fn["name"] not in last_args:
                            score = 0.0
                            break
                        score *= clipped_cosine(ctx.embedder, json.dumps(fn.get("arguments")),
                                                json.dumps(last_args[fn["name"]]))
            m["answer_acc_w_imggen"] += score
            row["imggen_score"] = score
        names = []
        for p in preds:
            if "tool_calls" in p:
                m["tool_call"] += 1
                m["tool_call_error"] += "error" in p
                name = p["tool_calls"][0]["function"].get("name")
                names.append(name)
                if tool_type(name) in predicted:
                    predicted[tool_type(name)] += 1
        for g in gts:
            if "tool_calls" in g:
                name = g["tool_calls"][0]["function"].get("name")
                cat = tool_type(name)
                if cat == "none":  # the reference crashes (KeyError) here; we skip and say so
                    unknown.add(str(name))
                    continue
                total[cat] += 1
                hit[cat] += name in names
        per_item.append(row)
    f1s: dict[str, Any] = {}
    for c in CATEGORIES:
        precision = hit[c] / (predicted[c] + 1e-5)
        recall = hit[c] / total[c] if total[c] else 0.0
        f1 = 2 * precision * recall / (precision + recall + 1e-5)
        f1s[c] = {"precision": precision * 100, "recall": recall * 100, "f1": f1 * 100,
                  "hit": hit[c], "predicted": predicted[c], "gold": total[c]}
    metrics = {
        "AnsAcc": pct(m["answer_acc"], total["answer"]), "AnsAcc+I": pct(m["answer_acc_w_imggen"], total["all"]),
        "P": f1s["perception"]["f1"], "O": f1s["operation"]["f1"], "L": f1s["logic"]["f1"], "C": f1s["creativity"]["f1"],
        "tool_call": m["tool_call"], "tool_call_error": m["tool_call_error"], "tool_selection": f1s,
        "counts": {"answer_acc": m["answer_acc"], "answer_acc_w_imggen": m["answer_acc_w_imggen"],
                   "total_answer": total["answer"], "total_all": total["all"]},
    }
    notes = []
    if unknown:
        notes.append(f"gold calls to tools outside GTA's four categories were skipped (the reference raises "
                     f"KeyError): {', '.join(sorted(unknown))}")
    return metrics, per_item, notes


def checkpoint_judge_scores(items: list[Item], ctx: ScoreContext) -> tuple[float | None, int, list[tuple[int, Any]]]:
    """GTA-2: each leaf checkpoint judged 0–10; a parent is the weighted mean of its children."""
    from evaluation.scoring.checkpoints import CheckpointOutcome

    roots_scores: list[float] = []
    pending = 0
    outcomes: list[tuple[int, Any]] = []
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
            req = JudgeRequest.make(CHECKPOINT_JUDGE, traj, f"checkpoint:{cp['key']}", {
                "task": it.task.get("query") or "", "answer": it.final_answer(),
                "requirement": cp.get("description") or ""}, produced)
            got = ctx.oracle.ask(req)
            if got is None or got.score is None:
                pending += got is None
                return None
            outcomes.append((traj, CheckpointOutcome(cp.get("id"), cp["key"], got.score >= 5.0, None, "judge",
                                                     {"score": got.score, "judge": got.judge_name})))
            return got.score

        vals = [value(r) for r in children.get(None, [])]
        if vals and all(v is not None for v in vals):
            roots_scores.extend(vals)  # type: ignore[arg-type]
    return (sum(roots_scores) / len(roots_scores) if roots_scores else None), pending, outcomes


class GTAProfile:
    name = "gta"
    formats = ("gta",)
    judges = (CHECKPOINT_JUDGE,)

    def score(self, items: list[Item], ctx: ScoreContext) -> dict[str, Any]:
        notes: list[str] = []
        if ctx.run_mode == "step":
            metrics, per_item = score_step(items, ctx)
        else:
            metrics, per_item, notes = score_e2e(items, ctx)
        gpt, pending, outcomes = checkpoint_judge_scores(items, ctx)
        if gpt is not None:
            metrics["checkpoint_judge_score"] = gpt
        return result(self.name, ctx, metrics, per_item=per_item, outcomes=outcomes, notes=notes,
                      pending=pending if gpt is not None or any(it.checkpoints for it in items) else 0,
                      usage=usage_stats(items))


PROFILE = GTAProfile()
