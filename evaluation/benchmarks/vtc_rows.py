"""The row VTC-Bench's scorer sees for each trajectory: answer, options, prediction, question, category.

Faithful mode rebuilds the reference's evaluation sheet: the task table's cells as the TSV held them
(an answer given as option text stays text) and the predictions file's values, sent through the
TSV → xlsx → pandas trip of ``vtc_sheet``. Fixed mode reads the same cells as written, whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluation.benchmarks import vtc_sheet
from evaluation.scoring.items import Item

MAIN_FILE, GT_FILE = "VTC-Bench.tsv", "VTC-Bench_GTToolChain.tsv"
SHEET_OPTIONS = "ABCDE"  # the option columns the reference copies into its sheet
TSV_COLUMNS = ("question", "answer", "category", *SHEET_OPTIONS)

# What fixed mode changes, by name (the README describes each): no xlsx round trip; the math check the
# reference computes and drops; lenient judge replies, option-text answers compared by letter.
FIXED_CORRECTIONS = ("vtc-no-sheet-round-trip", "vtc-math-verify", "vtc-judge-letters")


@dataclass
class SheetRow:
    answer: str
    options: dict[str, str] = field(default_factory=dict)  # letter → text, only options the scorer sees
    prediction: str = ""
    question: str = ""
    category: str | None = None


def task_row(item: Item) -> dict[str, Any]:
    """The task's row in the table the reference reads (the tool-chain file is canonical)."""
    src = item.source
    for name in (GT_FILE, MAIN_FILE):
        if isinstance(src.get(name), dict):
            return src[name]
    if "answer" in src:
        return src
    spec = item.task.get("answer_spec") or {}
    row: dict[str, Any] = {"question": item.task.get("query") or "", "category": item.task.get("category") or ""}
    if spec.get("kind") == "mcq":
        row["answer"] = str(spec.get("letter") or "")
        row.update({k: str(v) for k, v in (spec.get("options") or {}).items()})
    else:
        row["answer"] = str(spec.get("value") or "")
    return row


def predicted_value(item: Item) -> Any:
    """The prediction as the predictions file held it (a number stays a number; None becomes '')."""
    native = item.native
    if isinstance(native, dict) and isinstance(native.get("result"), dict):
        value = native["result"].get("agent_answer", "")
        return "" if value is None else value
    return item.final_answer()


def sheet_rows(items: list[Item], mode: str) -> list[SheetRow]:
    if mode != "faithful":
        return [fixed_row(it) for it in items]
    return faithful_rows([task_row(it) for it in items], [predicted_value(it) for it in items])


def faithful_rows(rows: list[dict[str, Any]], predictions: list[Any]) -> list[SheetRow]:
    """The sheet's rows from each trajectory's ``task_row`` and ``predicted_value``: pandas infers a
    column's type from the whole column, so this needs every row of the run at once (rows are small; the
    items they came from need not be kept)."""
    present = {c for r in rows for c in r} & set(TSV_COLUMNS)
    columns: dict[str, list[Any]] = {c: [None if c not in r else str(r[c]) for r in rows] for c in present}
    columns["prediction"] = predictions
    sheet = vtc_sheet.round_trip(columns, present)
    out = []
    for n in range(len(rows)):
        cell = {c: v[n] for c, v in sheet.items()}
        options = {
            L: vtc_sheet.as_text(cell[L]) for L in SHEET_OPTIONS if L in cell and cell[L] is not vtc_sheet.MISSING
        }
        category = cell.get("category")
        out.append(
            SheetRow(
                answer=vtc_sheet.as_text(cell.get("answer")),
                options=options,
                prediction=vtc_sheet.as_text(cell["prediction"]),
                question=vtc_sheet.as_text(cell.get("question")),
                category=None if category is vtc_sheet.MISSING else vtc_sheet.as_text(category),
            )
        )
    return out


def fixed_row(item: Item) -> SheetRow:
    """Fixed mode's row: the cells as written, one trajectory at a time."""
    row = task_row(item)
    options = {L: str(row[L]) for L in "ABCDEFG" if str(row.get(L) or "").strip()}
    value = predicted_value(item)
    return SheetRow(
        answer=str(row.get("answer") or ""),
        options=options,
        prediction=value if isinstance(value, str) else str(value),
        question=str(row.get("question") or item.task.get("query") or ""),
        category=str(row.get("category") or item.task.get("category") or "") or None,
    )
