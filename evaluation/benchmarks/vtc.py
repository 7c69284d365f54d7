"""VTC-Bench profile: APR (accuracy, rule first then judge), TCR, MAE and tool-usage efficiency.

APR follows ``VTCBenchDataset.evaluate``: a lower-cased rule score (MCQ letter rules or open-answer
rules); rows the rule marks wrong go to a judge (MCQ: an extractor of the chosen letters, hit when
the sorted letters equal the answer's; open: a yes/no evaluator); ``final = rule if rule ≥ 0.5
else judge``; APR = mean(final) × 100 overall and per category. Rows still waiting for a judge count
as wrong and are reported as pending.

TCR, MAE and efficiency are not in the released code; they follow the paper's §3.3: TCR = share of
tasks with ≥ 1 tool call; MAE = mean |#predicted calls − ground-truth chain length|; efficiency =
effective steps / predicted steps, where the *effective tool chain* is found by backtracking from
the last produced image through each call's input image to the original image (code runs: every
traced op counts as effective, since a data flow is not recorded).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from pathlib import Path

from evaluation.benchmarks.base import ScoreContext, UsageCounter, mean, pct, result, tool_calls_of
from evaluation.scoring.results import ScoreResult
from evaluation.benchmarks.vtc_judging import ask_judge
from evaluation.benchmarks.vtc_rows import (
    FIXED_CORRECTIONS,
    SheetRow,
    faithful_rows,
    fixed_row,
    predicted_value,
    task_row,
)
from evaluation.judges.reference_prompts import PromptSource
from evaluation.scoring.items import Item
from evaluation.scoring.matchers import vtc_is_mcq, vtc_rule_mcq, vtc_rule_open
from store import safe_json

MCQ_JUDGE, OPEN_JUDGE = "vtc-mcq-extract", "vtc-open-judge"
CORRECTIONS = {
    "vtc-no-sheet-round-trip": "cells are scored as written (no xlsx write and read-back)",
    "vtc-math-verify": "open answers also count when Math-Verify finds them equal (the reference computes this "
    "and drops the result)",
    "vtc-judge-letters": "judge replies are read leniently, and an option-text answer is compared by its letter",
}
assert set(CORRECTIONS) == set(FIXED_CORRECTIONS)

# Where VTC-Bench keeps its two judge prompts (read from the user's checkout by
# ``chainmark judges import-prompts vtc PATH``; the text is never part of chainmark). The reference
# asks with max_tokens 128; each try's temperature is set per request (vtc_judging).
_EVALUATE = "VTCBenchDataset.evaluate.VTCBench_auxeval"
_IMAGE_VQA = "eval/eval/VLMEvalKit/vlmeval/dataset/image_vqa.py"
REFERENCE_PROMPTS = [
    PromptSource(
        MCQ_JUDGE,
        _IMAGE_VQA,
        _EVALUATE,
        "tmpl",
        ("question", "options", "prediction"),
        occurrence=0,
        params={"max_tokens": 128, "temperature": 0},
    ),
    PromptSource(
        OPEN_JUDGE,
        _IMAGE_VQA,
        _EVALUATE,
        "tmpl",
        ("answer", "prediction"),
        occurrence=1,
        params={"max_tokens": 128, "temperature": 0},
    ),
]
_EDITED = re.compile(r"Edited Image Path:\s*(\S+)")


def gt_chain(item: Item) -> list[str]:
    raw = item.source.get("model_tools_gt")
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = safe_json.loads(raw.replace("“", '"').replace("”", '"'))
            if isinstance(parsed, list):
                return [str(x) for x in parsed]
        except json.JSONDecodeError:
            pass
    if isinstance(raw, list):
        return [str(x) for x in raw]
    return [s["tool_name"] for s in item.reference_steps if s.get("tool_name")]


def _add_refs(out: set[str], value: Any) -> None:
    """Add the names an image reference goes by: a path and its file name, or an image index."""
    if isinstance(value, str) and value:
        out.add(value)
        out.add(value.rsplit("/", 1)[-1])
    elif isinstance(value, int) and not isinstance(value, bool):
        out.add(f"#index:{value}")


_OUTPUT_KEYS = ("output_path", "saved_path", "image_path")


def effective_chain(item: Item) -> tuple[int, int]:
    """(effective steps, predicted steps) by backtracking image provenance from the last output."""
    calls: list[tuple[set[str], set[str], bool]] = []  # (ins, outs, ok) per step
    code_steps = 0
    results: dict[str, dict[str, Any]] = {}
    for e in item.events:
        if e["kind"] == "tool_result":
            results[str((e.get("payload") or {}).get("call_id") or "")] = e.get("payload") or {}
    for e in item.events:
        kind = e["kind"]
        if kind == "tool_call":
            p = e.get("payload") or {}
            args: dict[str, Any] = p["arguments"] if isinstance(p.get("arguments"), dict) else {}
            res = results.get(str(p.get("call_id") or ""), {})
            outs: set[str] = set()
            data = res.get("data")
            if data:
                for key in _OUTPUT_KEYS:
                    _add_refs(outs, data.get(key))
            text = str(res.get("text") or "")
            if "Edited Image Path:" in text:
                for m in _EDITED.finditer(text):
                    _add_refs(outs, m.group(1))
            if res.get("image_index") is not None:
                _add_refs(outs, int(res["image_index"]))
            for a in res.get("asset_ids") or []:
                outs.add(f"#asset:{a}")
            ins: set[str] = set()
            _add_refs(ins, args.get("image"))
            _add_refs(ins, args.get("image_path"))
            if args.get("image_index") is not None:
                _add_refs(ins, int(args["image_index"]))
            if args.get("asset_id") is not None:
                ins.add(f"#asset:{args['asset_id']}")
            calls.append((ins, outs, bool(res.get("ok", True)) and not e.get("failed")))
        elif kind == "code_exec":
            for _ in (e.get("payload") or {}).get("ops") or []:
                calls.append((set(), set(), True))
                code_steps += 1
    total = len(calls)
    if not total:
        return 0, 0
    if code_steps == total:
        return total, total
    producing = [i for i, (_, outs, ok) in enumerate(calls) if outs and ok]
    if not producing:
        return 0, total
    chain = {producing[-1]}
    frontier = producing[-1]
    while True:
        wanted = calls[frontier][0]
        source = next((j for j in range(frontier - 1, -1, -1) if calls[j][1] & wanted and calls[j][2]), None)
        if source is None:
            break
        chain.add(source)
        frontier = source
    return len(chain), total


@dataclass
class _Kept:
    """What scoring a trajectory needs once its chunk's items are dropped."""

    trajectory_id: int
    task_id: Any
    item_id: Any
    calls: int  # tool calls the model made
    gt_chain: int  # length of the ground-truth tool chain
    effective: int  # effective_chain: (effective steps, predicted steps)
    total: int
    oracle: Any  # the judge oracle of the trajectory's chunk


class VTCProfile:
    name = "vtc"
    formats = ("vtc", "vtc-bench")
    judges = (MCQ_JUDGE, OPEN_JUDGE)
    reference_prompts = REFERENCE_PROMPTS

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult:
        return self.score_chunks([items], ctx)

    def score_chunks(self, chunks: Iterable[list[Item]], ctx: ScoreContext) -> ScoreResult:
        """The run's items a chunk at a time (the runner loads a large run this way). Each item leaves
        behind only its sheet cells, its tool-chain counts and its chunk's judge oracle; the sheet is built
        and the rows are scored once every chunk has been read, since faithful mode's sheet infers each
        column's type from the whole column. Nothing depends on where the chunks are cut."""
        kept: list[_Kept] = []
        cells: list[dict[str, Any]] = []
        predictions: list[Any] = []
        fixed: list[SheetRow] = []
        usage = UsageCounter()
        for items in chunks:
            for it in items:
                if ctx.mode == "faithful":
                    cells.append(task_row(it))
                    predictions.append(predicted_value(it))
                else:
                    fixed.append(fixed_row(it))
                eff, total = effective_chain(it)
                kept.append(
                    _Kept(
                        int(it.trajectory.get("id") or 0),
                        it.task.get("id"),
                        it.task.get("source_id"),
                        len(tool_calls_of(it)),
                        len(gt_chain(it)),
                        eff,
                        total,
                        ctx.oracle,
                    )
                )
            usage.add(items)
            del items  # not held while the next chunk loads
        rows = faithful_rows(cells, predictions) if ctx.mode == "faithful" else fixed
        del cells, predictions, fixed
        per_item = []
        pending = 0
        chunk_oracle = ctx.oracle
        try:
            for k, sheet in zip(kept, rows):
                ctx.oracle = k.oracle  # the oracle that holds this trajectory's verdicts
                per_item.append(self._row(k, sheet, ctx))
                pending += per_item[-1].get("judge") == "pending"
        finally:
            ctx.oracle = chunk_oracle

        def agg(rows: list[dict[str, Any]]) -> dict[str, Any]:
            effs = [r["efficiency"] for r in rows if r["efficiency"] is not None]
            return {
                "items": len(rows),
                "APR": pct(sum(r["final"] >= 0.5 for r in rows), len(rows)),
                "rule_only_accuracy": pct(sum(r["rule"] >= 0.5 for r in rows), len(rows)),
                "TCR": pct(sum(r["calls"] > 0 for r in rows), len(rows)),
                "MAE": mean([float(r["abs_error"]) for r in rows]),
                "efficiency": mean(effs) * 100 if effs else None,
                "avg_calls": mean([float(r["calls"]) for r in rows]),
            }

        cats: dict[str, list[dict[str, Any]]] = {}
        for r in per_item:
            cats.setdefault(str(r["category"] or "uncategorised"), []).append(r)
        for name in FIXED_CORRECTIONS:  # each applies to the whole fixed-mode path
            ctx.correct(name)
        out = result(
            self.name,
            ctx,
            agg(per_item),
            by_category={k: agg(v) for k, v in sorted(cats.items())},
            per_item=per_item,
            pending=pending,
            usage=usage.stats(),
            notes=["TCR/MAE/efficiency follow the paper's definitions; the released code has none"],
        )
        return out

    @staticmethod
    def _row(k: _Kept, sheet: SheetRow, ctx: ScoreContext) -> dict[str, Any]:
        """One trajectory's per-item row: the rule, else the judge, and the tool-chain figures."""
        mcq = vtc_is_mcq(sheet.answer, sheet.options)
        rule = (
            vtc_rule_mcq(sheet.prediction, sheet.answer, sheet.options)
            if mcq
            else vtc_rule_open(sheet.prediction, sheet.answer, ctx.mode)
        )
        row: dict[str, Any] = {
            "trajectory_id": k.trajectory_id,
            "task_id": k.task_id,
            "item_id": k.item_id,
            "category": sheet.category,
            "mcq": mcq,
            "rule": rule,
        }
        final = rule
        if rule < 0.5:
            verdict = ask_judge(ctx, k.trajectory_id, sheet)
            if verdict is None:
                row["judge"] = "pending"
                final = 0.0
            else:
                final = verdict["hit"]
                row["judge"] = verdict
        row["final"] = final
        row.update(
            calls=k.calls,
            gt_chain=k.gt_chain,
            abs_error=abs(k.calls - k.gt_chain),
            effective_steps=k.effective,
            efficiency=(k.effective / k.total) if k.total else None,
        )
        return row

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: the final hit (rule, else judge)."""
        return float(row["final"]) if isinstance(row.get("final"), (int, float)) else None


PROFILE = VTCProfile()


def reference_conformance(export_dir: Path, reference: Path, python: str) -> dict[str, Any]:
    """VTC-Bench's own scorer on an exported run: ``{"metrics": {"APR", "APR[<category>]"}, "items":
    {item_id: {"rule", "final"}}}`` (see ``vtc_reference``)."""
    from evaluation.benchmarks.vtc_reference import run_reference

    return run_reference(export_dir, reference, python)


def conformance_ours(score_result: ScoreResult) -> dict[str, Any]:
    """chainmark's score in ``reference_conformance``'s names: the category APRs as ``APR[<category>]``
    (the reference reports them per category, chainmark in ``by_category``)."""
    metrics = {k: v for k, v in score_result.metrics.items() if not isinstance(v, (dict, list))}
    for category, block in score_result.by_category.items():
        metrics[f"APR[{category}]"] = (block or {}).get("APR")
    items = {
        str(row["item_id"]): {k: v for k, v in row.items() if k != "item_id"}
        for row in score_result.per_item
        if isinstance(row, dict) and row.get("item_id") is not None
    }
    return {"metrics": metrics, "items": items}
