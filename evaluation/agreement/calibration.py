"""How a judge's values line up with the people's on the items both rated, per task category.

* Confusion matrix (judge value × people's value), per category and overall, for two-label scales
  and numeric scales of few values (up to 11, e.g. ISG's 1-10); interval scales with more values are
  binned like the reliability table.
* Reliability table for scored judges: the judge's value (or its probability, when verdicts carry
  one) in bins, against the people's mean in that bin: a calibrated judge has the two equal.
* Several judges on one target: their pairwise agreement (share of equal values, or mean distance over
  the span for numeric scales) and a *majority judge* (majority vote, a tie unlabelled; the median on
  numeric scales) that is then estimated like any other judge.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import numpy as np

from evaluation.agreement.estimates import Item, JudgedItems

MAX_CELLS = 11
BINS = 10
MAJORITY = "majority"


def _fmt(value: float) -> str:
    return f"{value:g}"


def _bin_edges(data: JudgedItems) -> np.ndarray:
    low = min(data.scale.values) if data.scale.numeric else 0.0
    return np.linspace(float(low), float(low) + data.span, BINS + 1)


def _cell(value: float, data: JudgedItems, edges: np.ndarray | None) -> str:
    if edges is None:
        if data.binary:
            return str(data.scale.values[0] if value >= 0.5 else data.scale.values[1])
        return _fmt(value)
    return _bin_label(value, edges)


def _bin_label(value: float, edges: np.ndarray) -> str:
    """The bin of ``edges`` holding ``value`` (the top edge belongs to the last bin)."""
    k = min(int(np.searchsorted(edges, value, side="right")) - 1, len(edges) - 2)
    return f"{_fmt(float(edges[k]))}-{_fmt(float(edges[k + 1]))}"


def _few_values(data: JudgedItems) -> bool:
    return data.binary or len(data.scale.values) <= MAX_CELLS


def confusion(items: list[Item], data: JudgedItems) -> dict[str, dict[str, int]]:
    """judge cell → people cell → count, over items with a people's value (interval means rounded
    to the nearest scale value when the scale has few values)."""
    edges = None if _few_values(data) else _bin_edges(data)
    values = [float(v) for v in data.scale.values] if data.scale.numeric else []
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for i in items:
        if i.human is None:
            continue
        human = min(values, key=lambda v: abs(v - i.human)) if values and edges is None else i.human  # type: ignore[operator]
        out[_cell(i.judge, data, edges)][_cell(human, data, edges)] += 1
    return {j: dict(row) for j, row in out.items()}


@dataclass(frozen=True)
class ReliabilityBin:
    bin: str
    n: int
    judge_mean: float
    human_mean: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "bin": self.bin,
            "n": self.n,
            "judge_mean": round(self.judge_mean, 6),
            "human_mean": round(self.human_mean, 6),
        }


def reliability(
    items: list[Item], data: JudgedItems, probabilities: dict[int, float] | None = None
) -> list[ReliabilityBin]:
    """The judge's score against the people's mean, binned; on two-label scales by the verdict's
    probability when it has one (else by its label)."""
    probabilities = probabilities or {}
    pairs = []
    for i in items:
        if i.human is None:
            continue
        score = probabilities.get(i.verdict_id, i.judge) if data.binary else i.judge
        pairs.append((score, i.human))
    if data.binary and any(i.verdict_id in probabilities for i in items):
        edges: np.ndarray | None = np.linspace(0.0, 1.0, BINS + 1)
    else:
        edges = None if _few_values(data) else _bin_edges(data)
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    order: dict[str, float] = {}
    for score, human in pairs:
        key = _fmt(score) if edges is None else _bin_label(score, edges)
        groups[key].append((score, human))
        order[key] = min(order.get(key, score), score)
    return [
        ReliabilityBin(k, len(g), float(np.mean([s for s, _ in g])), float(np.mean([h for _, h in g])))
        for k, g in sorted(groups.items(), key=lambda kv: order[kv[0]])
    ]


def judge_values(data: JudgedItems) -> dict[str, dict[Any, float]]:
    """Every judge's value per item unit: the judge asked about first, then the others."""
    out: dict[str, dict[Any, float]] = {data.judge: {i.unit: i.judge for i in data.items}}
    for i in data.items:
        for name, value in i.others.items():
            out.setdefault(name, {})[i.unit] = value
    return out


def judge_agreement(data: JudgedItems) -> list[dict[str, Any]]:
    """Each pair of judges on the items both judged: n and agreement (share equal) or mean distance."""
    values = judge_values(data)
    rows = []
    for a, b in combinations(sorted(values), 2):
        shared = [u for u in values[a] if u in values[b]]
        if not shared:
            continue
        gaps = [abs(values[a][u] - values[b][u]) for u in shared]
        row: dict[str, Any] = {"a": a, "b": b, "n": len(shared)}
        if data.binary:
            row["agreement"] = round(sum(1 for g in gaps if g == 0) / len(gaps), 6)
        else:
            row["mean_distance"] = round(float(np.mean(gaps)) / (data.span or 1.0), 6)
        rows.append(row)
    return rows


def _majority(votes: list[float], binary: bool) -> float | None:
    if not binary:
        return float(np.median(votes))
    top = Counter(votes).most_common()
    if len(top) > 1 and top[0][1] == top[1][1]:
        return None
    return top[0][0]


def majority_judge(data: JudgedItems) -> JudgedItems | None:
    """The judges' majority as a judge of its own (None with fewer than two judges); items where a
    binary vote ties are left out and counted in the notes."""
    if not any(i.others for i in data.items):
        return None
    items, ties = [], 0
    for i in data.items:
        vote = _majority([i.judge, *i.others.values()], data.binary)
        if vote is None:
            ties += 1
            continue
        items.append(replace(i, judge=vote, others={}, verdict_id=0))
    notes = [f"{ties} item(s) where the judges tie are left out"] if ties else []
    return replace(data, judge=MAJORITY, items=items, notes=notes)


def calibration_report(data: JudgedItems, probabilities: dict[int, float] | None = None) -> dict[str, Any]:
    """The confusion matrices, reliability table and judge agreement of one scale, as a dict."""
    return {
        "run": data.run_id,
        "judge": data.judge,
        "scale": data.scale.name,
        "dimension": data.dimension,
        "labelled": sum(1 for i in data.items if i.human is not None),
        "confusion": {
            "overall": confusion(data.items, data),
            "by_category": {c: confusion(data.in_category(c), data) for c in data.categories()},
        },
        "reliability": [b.to_dict() for b in reliability(data.items, data, probabilities)],
        "judges": sorted(judge_values(data)),
        "judge_agreement": judge_agreement(data),
    }
