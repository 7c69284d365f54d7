"""Which items people should label next so the prediction-powered interval shrinks fastest.

Stratified by task category, so the estimate stays valid: inside a category the items to label are
drawn at random (seeded), never picked by how doubtful they look, because PPI's correction term is
only unbiased over a random sample of the category. Doubt decides how MANY labels each category
gets: the next label goes to the category whose interval it narrows most (Neyman allocation,
greedy): the one with the largest N_h² · v_h · (1/m_h − 1/(m_h+1)), where N_h is its item count,
m_h its labels (given, already assigned, or chosen so far) and v_h the variance of the people's
correction of the judge there — measured once a category has 5 labels, before that a prior that
grows with the category's doubt:

* the judge's own uncertainty, when its verdict carries a probability (a score in [0, 1] on a
  two-label scale): 4 p (1 − p);
* disagreement between judges on the same scale: the share of other judges who differ (two labels)
  or their mean distance over the scale's span (numeric).

An item's doubt is the larger of the two; the prior is (0.1 + mean doubt) × span² / 4 (span²/4 is
the largest variance a value on the scale can have).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlmodel import Session, select

from evaluation.agreement.estimates import Item, JudgedItems, verdict_probabilities
from evaluation.agreement.matrix import Unit
from store.models import Assignment

MEASURED_FROM = 5  # labels in a category before its own residual variance is trusted
PRIOR_FLOOR = 0.1


@dataclass(frozen=True)
class PlannedItem:
    unit: Unit
    category: str
    doubt: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.unit.to_dict(),
            "label": self.unit.label(),
            "category": self.category,
            "doubt": round(self.doubt, 4),
        }


@dataclass(frozen=True)
class Stratum:
    category: str
    items: int
    labelled: int
    pending: int
    variance: float
    measured: bool
    chosen: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "items": self.items,
            "labelled": self.labelled,
            "pending": self.pending,
            "variance": round(self.variance, 6),
            "variance_from": "labels" if self.measured else "doubt prior",
            "chosen": self.chosen,
        }


@dataclass(frozen=True)
class Plan:
    items: list[PlannedItem]
    strata: list[Stratum]

    def to_dict(self) -> dict[str, Any]:
        return {"items": [i.to_dict() for i in self.items], "strata": [s.to_dict() for s in self.strata]}


def item_doubt(item: Item, data: JudgedItems, probability: float | None = None) -> float:
    """How unsure the judges are about an item, 0..1 (see the module docstring)."""
    uncertainty = 4 * probability * (1 - probability) if probability is not None and 0 <= probability <= 1 else 0.0
    if not item.others:
        return uncertainty
    gaps = [abs(v - item.judge) / (data.span or 1.0) for v in item.others.values()]
    return max(uncertainty, float(np.mean(gaps)))


def stratum_variance(items: list[Item], doubts: list[float], span: float) -> tuple[float, bool]:
    """The variance of the people's correction of the judge in one category, measured or prior."""
    labelled = [i for i in items if i.human is not None]
    if len(labelled) >= MEASURED_FROM:
        residuals = np.array([i.human - i.judge for i in labelled])  # type: ignore[operator]
        return float(residuals.var(ddof=1)), True
    mean_doubt = float(np.mean(doubts)) if doubts else 0.0
    return (PRIOR_FLOOR + mean_doubt) * span**2 / 4, False


def _gain(size: int, variance: float, labels: int) -> float:
    if labels == 0:
        return float("inf")
    return size**2 * variance * (1 / labels - 1 / (labels + 1))


def allocate(
    sizes: dict[str, int], variances: dict[str, float], have: dict[str, int], room: dict[str, int], budget: int
) -> dict[str, int]:
    """Greedy Neyman allocation of ``budget`` new labels over categories (at most ``room`` each);
    ties go to the category first in name order."""
    chosen = {c: 0 for c in sizes}
    for _ in range(budget):
        open_ = [c for c in sorted(sizes) if chosen[c] < room[c]]
        if not open_:
            break
        best = max(open_, key=lambda c: (_gain(sizes[c], variances[c], have[c] + chosen[c]), -sorted(sizes).index(c)))
        chosen[best] += 1
    return chosen


def plan_labels(
    data: JudgedItems,
    budget: int,
    *,
    pending: set[Unit] | None = None,
    probabilities: dict[int, float] | None = None,
    seed: int = 0,
) -> Plan:
    """The next ``budget`` items to label (none already labelled or ``pending`` assignment)."""
    pending = pending or set()
    probabilities = probabilities or {}
    doubt = {i.unit: item_doubt(i, data, probabilities.get(i.verdict_id)) for i in data.items}
    categories = data.categories()
    groups = {c: data.in_category(c) for c in categories}
    candidates = {c: [i for i in g if i.human is None and i.unit not in pending] for c, g in groups.items()}
    measured: dict[str, bool] = {}
    variances: dict[str, float] = {}
    for c, g in groups.items():
        variances[c], measured[c] = stratum_variance(g, [doubt[i.unit] for i in g], data.span)
    have = {c: sum(1 for i in g if i.human is not None or i.unit in pending) for c, g in groups.items()}
    counts = allocate(
        {c: len(g) for c, g in groups.items()}, variances, have, {c: len(v) for c, v in candidates.items()}, budget
    )
    rng = random.Random(seed)
    chosen: list[PlannedItem] = []
    for c in categories:
        pool = sorted(candidates[c], key=lambda i: i.unit)
        for item in rng.sample(pool, counts[c]):
            chosen.append(PlannedItem(item.unit, c, doubt[item.unit]))
    strata = [
        Stratum(
            c,
            len(g),
            sum(1 for i in g if i.human is not None),
            sum(1 for i in g if i.human is None and i.unit in pending),
            variances[c],
            measured[c],
            counts[c],
        )
        for c, g in groups.items()
    ]
    return Plan(chosen, strata)


def open_assignments(session: Session, scale: str) -> set[Unit]:
    """Targets someone has been asked to rate on the scale and has not yet: labels on their way."""
    rows = session.exec(select(Assignment).where(Assignment.scale == scale, Assignment.status == "open")).all()
    return {Unit(a.target_kind, a.target_id, a.target_part) for a in rows}


def plan_for(session: Session, data: JudgedItems, budget: int, seed: int = 0) -> Plan:
    """``plan_labels`` with what the store knows: open assignments and the verdicts' probabilities."""
    return plan_labels(
        data,
        budget,
        pending=open_assignments(session, data.scale.name),
        probabilities=verdict_probabilities(session, data),
        seed=seed,
    )
