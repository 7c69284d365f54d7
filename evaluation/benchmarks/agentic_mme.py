"""Agentic-MME profile: ``evaluation/eval_runs_search.py`` + ``analyze_v.py`` of the reference repo.

Per trajectory: the checkpoint engine (S/V/R, one-to-one matching, any-pass visual checks, search
judge, ordering with max gap, efficiency penalty, PQS) and the final-answer ACC with its ≤2-char
numeric word-boundary rule. Aggregates overall and per level (L1/L2/L3): Acc, avg S, avg V (over
tasks that have such checkpoints), V-tool / V-true pass rates, penalty, tool calls, tool usage,
checkpoint pass rates ≥50%/≥80%, perfect cases (PQS = 1) and the overthink analysis.
Run.mode ``code`` builds the tool-use list the general-mode way (see ``scoring.checkpoints``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from evaluation.benchmarks.base import ScoreContext, UsageCounter, mean, result
from evaluation.scoring.results import ScoreResult
from evaluation.benchmarks.agentic_mme_conformance import chainmark_view as conformance_ours  # noqa: F401  (profile hook)
from evaluation.benchmarks.agentic_mme_conformance import reference_conformance  # noqa: F401  (profile hook)
from evaluation.benchmarks.agentic_mme_conformance import REFERENCE_IS_JUDGED  # noqa: F401  (profile hook)
from evaluation.judges.reference_prompts import PromptSource
from evaluation.scoring.checkpoints import (
    SEARCH_JUDGE,
    VISUAL_JUDGE,
    ReferenceCrash,
    evaluate_process,
    native_tool_use_list,
    tool_use_list,
)
from evaluation.scoring.items import Item
from evaluation.scoring.matchers import amme_final_answer_correct

LEVELS = ("L1", "L2", "L3")


def golden_answer(item: Item) -> dict[str, Any]:
    if isinstance(item.source.get("golden_answer"), dict):
        return item.source["golden_answer"]
    spec = item.task.get("answer_spec") or {}
    kind = spec.get("kind")
    return {
        "value": spec.get("value", ""),
        "match_type": kind if kind in ("exact", "numeric") else "contains",
        "tolerance": spec.get("tolerance") or 0.0,
    }


def level_of(item: Item, mode: str = "fixed") -> str | None:
    """L1–L3. Faithful: the source record's ``meta.level`` must equal the number 1, 2 or 3 (the
    reference compares with ints, so "2" is in no level); an incomplete run folder is in none."""
    source = item.source
    if mode == "faithful":
        if incomplete_run(item):
            return None
        meta = source.get("meta") if isinstance(source.get("meta"), dict) else None
        if meta is not None:
            raw = meta.get("level", 0)
            return next((f"L{n}" for n in (1, 2, 3) if raw == n and not isinstance(raw, str)), None)
    raw = item.task.get("level") or (source.get("meta") or {}).get("level")
    s = str(raw or "").upper().lstrip("L")
    return f"L{s}" if s in ("1", "2", "3") else None


def incomplete_run(item: Item) -> bool:
    """An imported run folder without ``run_meta.json`` (the run died before it finished)."""
    native = item.native
    return isinstance(native, dict) and bool(native.get("incomplete"))


def run_meta(item: Item) -> dict[str, Any]:
    native = item.native if isinstance(item.native, dict) else {}
    text = (native.get("files") or {}).get("run_meta.json")
    if not text:
        return {}
    try:
        meta = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _usage(uses: list[dict[str, Any]]) -> dict[str, int]:
    usage: dict[str, int] = {}
    for u in uses:
        if u["output"].get("declared_only"):
            continue
        key = str(u["arguments"].get("op") or u.get("tool_name") or u.get("raw_tool_name") or "").lower()
        if key:
            usage[key] = usage.get(key, 0) + 1
    return usage


def incomplete_eval(item: Item, uses: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference's verdict on an incomplete run: S = V = 0, a wrong answer, no calls, no checkpoints."""
    return {
        "checkpoint_results": {},
        "ordering_results": [],
        "scores": {"S": 0.0, "V": 0.0, "R": 0.0, "base": 0.0, "penalty": 0.0, "PQS": 0.0},
        "efficiency": {"effective_tool_calls": 0, "reference_tool_calls": 0, "max_tool_calls": 0, "excess_calls": 0},
        "final_answer_accuracy": {"correct": False, "model_answer": "", "golden_answer": ""},
        "outcomes": [],
        "pending_judgements": 0,
        "tool_usage": _usage(uses),
        "incomplete": True,
        "incomplete_run": True,
    }


def score_item(item: Item, ctx: ScoreContext) -> dict[str, Any]:
    native = native_tool_use_list(item) if ctx.mode == "faithful" else None
    uses, effective = native or tool_use_list(item, code_mode=(ctx.run_mode == "code"), mode=ctx.mode)
    if ctx.mode == "faithful" and incomplete_run(item):
        return incomplete_eval(item, uses)
    answer = item.final_answer()
    try:
        ev = evaluate_process(item, uses, effective, mode=ctx.mode, oracle=ctx.oracle, answer=answer)
    except ReferenceCrash as exc:
        return {"dropped": str(exc)}
    golden = golden_answer(item)
    ev["final_answer_accuracy"] = {
        "correct": amme_final_answer_correct(golden, answer),
        "model_answer": answer.strip(),
        "golden_answer": golden.get("value"),
    }
    ev["tool_usage"] = _usage(uses)
    ev["incomplete"] = item.trajectory.get("status") not in ("done", None) and not item.events
    return ev


@dataclass
class Scored:
    """What the aggregation needs of one scored trajectory, so that its ``Item`` (events, task record) can
    be dropped once it is scored: a run is scored a chunk of items at a time."""

    trajectory_id: Any
    task_id: Any
    source_id: Any
    level: str | None
    search_keys: list[str]  # google_search checkpoints the search pass rate counts, in task order
    task_known: bool  # the task's checkpoints count on the human side of the overthink analysis
    human_tools: list[str]  # the tools those checkpoints name, in order
    s_checkpoints: int
    counts: tuple[int, ...] = ()  # checkpoint_counts: what aggregate adds up, worked out once per trajectory


def checkpoint_counts(search_keys: list[str], ev: dict[str, Any]) -> tuple[int, ...]:
    """(≥50 % of checkpoints passed, ≥80 %, V-tool passed, V-tool checks, V-true passed, V-true checks,
    search passed, search checks) for one trajectory; the overall and its level's aggregate add them."""
    results = ev["checkpoint_results"]
    pass50 = pass80 = 0
    counted = passed = 0
    tool_passed = tool_total = true_passed = true_total = 0
    for r in results.values():
        ok = bool(r.get("passed"))
        if r.get("axis") == "V":
            if len(r) == 1:  # a final-answer checkpoint: in no checkpoint rate
                continue
            if "visual_check" in r:
                true_passed += ok
                true_total += 1
            else:
                tool_passed += ok
                tool_total += 1
        counted += 1
        passed += ok
    if counted:
        rate = passed / counted
        pass50 += rate >= 0.5
        pass80 += rate >= 0.8
    search_passed = 0
    for key in search_keys:
        search_passed += bool(results.get(key, {}).get("search_check", {}).get("passed"))
    return (pass50, pass80, tool_passed, tool_total, true_passed, true_total, search_passed, len(search_keys))


@lru_cache(maxsize=1024)
def _named_op(verifier: str) -> str | None:
    """The first of the reference's operation names in a verifier's name, lower-cased (``analyze_v``)."""
    low = verifier.lower()
    return next((o for o in ("crop", "flip", "rotate", "enhance", "resize") if o in low), None)


def summarise(it: Item, ev: dict[str, Any], mode: str) -> Scored:
    # Faithful: the reference looks the task up under run_meta["task_json"], a key its runners never
    # write, so it counts no search checkpoint and prints 0 (see evaluation/eval_runs_search.py).
    searched = it.checkpoints if mode == "fixed" or "task_json" in run_meta(it) else []
    search_keys = [
        cp["key"] for cp in searched if any(str(t).lower() == "google_search" for t in cp.get("tools") or [])
    ]
    # Faithful: an incomplete run names no task file, so its task adds nothing to the human side.
    task_known = not (mode == "faithful" and ev.get("incomplete_run"))
    human: list[str] = []
    s_checkpoints = 0
    for cp in it.checkpoints if task_known else ():
        axis = cp.get("axis")
        if axis == "S":
            s_checkpoints += 1
            human.extend([str(t).lower() for t in cp.get("tools") or ()])
        elif axis == "V":
            tools = cp.get("tools")
            if tools:  # no tools, nothing to name: the verifier is not looked at
                op = _named_op(str((cp.get("code_check") or {}).get("verifier") or ""))
                human.extend([op if op else str(t).lower() for t in tools])
    return Scored(
        it.trajectory.get("id"),
        it.task.get("id"),
        it.task.get("source_id"),
        level_of(it, mode) if "dropped" not in ev else None,
        search_keys,
        task_known,
        human,
        s_checkpoints,
        () if "dropped" in ev else checkpoint_counts(search_keys, ev),
    )


class Totals:
    """What ``aggregate`` adds up, gathered one row at a time: the run's rows go through once, each into
    the overall totals and its level's (four passes per group took longer than scoring the items).
    Float columns are kept as lists and summed in row order, so every number is the one a ``sum`` over
    the rows gives."""

    __slots__ = ("n", "s", "v", "correct", "calls", "penalties", "perfect", "count_rows", "usage")

    def __init__(self) -> None:
        self.n = 0
        self.s: list[float] = []
        self.v: list[float] = []
        self.correct = 0
        self.calls = 0
        self.penalties: list[float] = []
        self.perfect = 0
        self.count_rows: list[tuple[int, ...]] = []  # each row's Scored.counts, added up column-wise at the end
        self.usage: dict[str, int] = {}

    def add(self, f: Scored, ev: dict[str, Any]) -> None:
        scores = ev["scores"]
        self.n += 1
        if scores["S"] is not None:
            self.s.append(scores["S"])
        if scores["V"] is not None:
            self.v.append(scores["V"])
        self.correct += ev["final_answer_accuracy"]["correct"]
        self.calls += ev["efficiency"]["effective_tool_calls"]
        self.penalties.append(scores["penalty"])
        self.perfect += scores["PQS"] == 1.0
        self.count_rows.append(f.counts)
        usage = self.usage
        for k, c in ev["tool_usage"].items():
            usage[k] = usage.get(k, 0) + c

    def counts(self) -> list[int]:
        """The Scored.counts columns, added up (integers: the same sums in any order)."""
        return [sum(column) for column in zip(*self.count_rows)] if self.count_rows else [0] * 8

    def metrics(self, mode: str = "fixed") -> dict[str, Any]:
        n = self.n
        if not n:
            return {"total_cases": 0}
        s, v, correct, calls = self.s, self.v, self.correct, self.calls
        pass50, pass80, tool_passed, tool_total, true_passed, true_total, search_passed, search_total = self.counts()
        return {
            "total_cases": n,
            "Acc": correct / n * 100,
            "S": mean(s) * 100 if s else None,  # type: ignore[operator]
            "V": mean(v) * 100 if v else None,  # type: ignore[operator]
            "V_tool": tool_passed / tool_total * 100 if tool_total else None,
            "V_true": true_passed / true_total * 100 if true_total else None,
            "total_s_cases": len(s),
            "total_v_cases": len(v),
            "final_answer_correct_count": correct,
            "avg_penalty": sum(self.penalties) / n,
            "total_tool_calls": calls,
            "avg_tool_calls_per_case": calls / n,
            "tool_usage": dict(sorted(self.usage.items(), key=lambda kv: -kv[1])),
            "perfect_cases": self.perfect,
            "checkpoint_pass_rate_50": pass50 / n * 100,
            "checkpoint_pass_rate_80": pass80 / n * 100,
            "cases_pass_50_checkpoints": pass50,
            "cases_pass_80_checkpoints": pass80,
            "search_checkpoint_pass_rate": search_passed / search_total * 100
            if search_total
            else (0.0 if mode == "faithful" else None),
            "search_checkpoints_total": search_total,
            "search_checkpoints_passed": search_passed,
            "v_tool_counts": {"passed": tool_passed, "total": tool_total},
            "v_true_counts": {"passed": true_passed, "total": true_total},
        }


def aggregate(rows: list[tuple[Scored, dict[str, Any]]], mode: str = "fixed") -> dict[str, Any]:
    totals = Totals()
    for f, ev in rows:
        totals.add(f, ev)
    return totals.metrics(mode)


def overthink(rows: list[tuple[Scored, dict[str, Any]]], mode: str = "fixed") -> dict[str, Any]:
    n = len(rows)
    over = under = optimal = exceeded = s_checkpoints = 0
    ratios: list[float] = []
    ref_total = model_total = 0
    human: Counter[str] = Counter()
    cases: list[dict[str, Any]] = []
    for f, ev in rows:
        eff = ev["efficiency"]
        ref, model = eff["reference_tool_calls"], eff["effective_tool_calls"]
        ref_total += ref
        model_total += model
        s_checkpoints += f.s_checkpoints
        human.update(f.human_tools)
        if f.task_known and eff["max_tool_calls"] > 0 and model > eff["max_tool_calls"]:
            exceeded += 1
        if ref > 0:
            kind = "overthink" if model > ref else "underthink" if model < ref else "optimal"
            over += kind == "overthink"
            under += kind == "underthink"
            optimal += kind == "optimal"
            ratios.append(model / ref)
            cases.append(
                {
                    "trajectory_id": f.trajectory_id,
                    "kind": kind,
                    "model_calls": model,
                    "reference_calls": ref,
                    "ratio": model / ref,
                }
            )
    return {
        "avg_overthink_ratio": sum(ratios) / len(ratios) if ratios else 0.0,
        "cases_overthink": over,
        "cases_underthink": under,
        "cases_optimal": optimal,
        "cases_exceeded_max": exceeded,
        "pct_overthink": over / n * 100 if n else 0.0,
        "pct_underthink": under / n * 100 if n else 0.0,
        "pct_optimal": optimal / n * 100 if n else 0.0,
        "human_total_reference_calls": ref_total,
        "model_total_calls": model_total,
        "human_total_s_checkpoints": s_checkpoints,
        "avg_excess_calls": (model_total - ref_total) / n if n else 0.0,
        "human_tool_usage": dict(sorted(human.items(), key=lambda kv: -kv[1])),
        "cases": cases,
    }


# The visual judge's system prompt, read from the user's checkout (``chainmark judges import-prompts
# agentic-mme PATH``); the reference's user turn is the image then the question, which is all the layout
# says. (The search judge's prompt is an f-string assembled in code: not importable as a template.)
REFERENCE_PROMPTS = [
    PromptSource(
        VISUAL_JUDGE,
        "evaluation/eval_runs_search.py",
        "run_visual_judge",
        "sys_prompt",
        (),
        role="system",
        params={"temperature": 0, "max_tokens": 100},
    ),
    PromptSource(VISUAL_JUDGE, "evaluation/eval_runs_search.py", "run_visual_judge", "", (), layout="{{question}}"),
]


class AgenticMMEProfile:
    name = "agentic-mme"
    formats = ("agentic-mme", "agentic_mme", "amme")
    judges = (VISUAL_JUDGE, SEARCH_JUDGE)
    reference_prompts = REFERENCE_PROMPTS

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult:
        return self.score_chunks([items], ctx)

    def score_chunks(self, chunks: Iterable[list[Item]], ctx: ScoreContext) -> ScoreResult:
        """The run's items a chunk at a time (the runner loads a large run this way): each item is scored
        and summarised (``Scored``) before the next chunk is loaded, and every number is aggregated once,
        over all summaries in item order, so it does not depend on where the chunks are cut."""
        scored: list[tuple[Scored, dict[str, Any]]] = []
        usage = UsageCounter()
        for items in chunks:
            scored.extend((summarise(it, ev, ctx.mode), ev) for it, ev in ((it, score_item(it, ctx)) for it in items))
            usage.add(items)
            del items  # not held while the next chunk loads
        rows = [(f, ev) for f, ev in scored if "dropped" not in ev]
        overall, levels = Totals(), {lv: Totals() for lv in LEVELS}
        for f, ev in rows:
            overall.add(f, ev)
            level = levels.get(f.level)  # type: ignore[arg-type]
            if level is not None:
                level.add(f, ev)
        metrics = overall.metrics(ctx.mode)
        metrics["overthink"] = overthink(rows, ctx.mode)
        by_level = {lv: t.metrics(ctx.mode) for lv, t in levels.items() if t.n}
        outcomes = [(int(f.trajectory_id or 0), o) for f, ev in rows for o in ev["outcomes"]]
        per_item = [
            {
                "trajectory_id": f.trajectory_id,
                "task_id": f.task_id,
                "source_id": f.source_id,
                "level": f.level,
                "incomplete_run": bool(ev.get("incomplete_run")),
                "scores": ev["scores"],
                "efficiency": ev["efficiency"],
                "final_answer_accuracy": ev["final_answer_accuracy"],
                "tool_usage": ev["tool_usage"],
                "checkpoint_results": ev["checkpoint_results"],
                "ordering_results": ev["ordering_results"],
            }
            for f, ev in rows
        ]
        dropped = [f for f, ev in scored if "dropped" in ev]
        per_item += [
            {
                "trajectory_id": f.trajectory_id,
                "task_id": f.task_id,
                "source_id": f.source_id,
                "dropped": ev["dropped"],
            }
            for f, ev in scored
            if "dropped" in ev
        ]
        notes = []
        incomplete = sum(bool(ev.get("incomplete_run")) for _, ev in rows)
        if incomplete:
            notes.append(
                f"{incomplete} incomplete run(s) (no run_meta.json) scored as the reference does: "
                "S = V = 0, wrong answer, in every overall denominator, in no level and no overthink case"
            )
        if dropped:
            names = ", ".join(str(f.source_id) for f in dropped[:10])
            notes.append(
                f"{len(dropped)} trajectorie(s) left out, as the reference evaluator raises on them "
                f"(a verifier it calls with the wrong arguments, or a metrics.json that is not an object): "
                f"{names}{' …' if len(dropped) > 10 else ''}"
            )
        return result(
            self.name,
            ctx,
            metrics,
            by_category=by_level,
            per_item=per_item,
            outcomes=outcomes,
            pending=sum(ev["pending_judgements"] for _, ev in rows),
            usage=usage.stats(),
            category_label="level",
            notes=notes,
        )

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: final-answer correctness (None when dropped)."""
        acc = row.get("final_answer_accuracy")
        return float(bool(acc.get("correct"))) if isinstance(acc, dict) else None


PROFILE = AgenticMMEProfile()
