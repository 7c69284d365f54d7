"""A run's score from one judge on every item and people on some: the items read from the store,
then the three estimates of ``ppi`` over them, overall and per task category.

What counts as an item: every target in the run's trajectories the judge gave a verdict on, read
onto a rating scale the way agreement reads it (``matrix.collect``: label scales by label, numeric
scales by score, dimensional scales one dimension at a time). The people's value of an item is its
newest adjudication on the scale, else the consensus of the people's newest ratings (the mean on
interval scales, the unique most common value otherwise; a tie leaves the item unlabelled).

Which scales: numeric ones (the value itself: ISG's 1-10 per dimension, ATP's 0-2 agreement, any
interval scale) and two-label ones (the first label counts 1: yes-no, pass-fail). A scale of three
or more labels has no mean and is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select

from evaluation.agreement import ppi
from evaluation.agreement.matrix import (
    HUMAN,
    JUDGE,
    RatingMatrix,
    ScaleInfo,
    Unit,
    adjudicated,
    collect,
    consensus,
    rater_kind,
    scale_info,
)
from evaluation.agreement.rankings import trajectory_id, within_runs
from store.models import Annotator, HumanRating, Judge, Run, Task, Trajectory, Verdict

NO_CATEGORY = "(none)"


class EstimateError(LookupError):
    """The run, judge or scale cannot be estimated; the message says why."""


@dataclass(frozen=True)
class Item:
    """One judged target: the judge's value as a number, the people's (None: unlabelled), the other
    judges' values on the same scale, and where the item's verdict came from."""

    unit: Unit
    category: str
    judge: float
    human: float | None
    others: dict[str, float] = field(default_factory=dict)
    verdict_id: int = 0


@dataclass
class JudgedItems:
    run_id: int
    judge: str
    scale: ScaleInfo
    dimension: str
    items: list[Item]
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.scale.name + (f".{self.dimension}" if self.dimension else "")

    @property
    def binary(self) -> bool:
        return not self.scale.numeric

    @property
    def span(self) -> float:
        return 1.0 if self.binary else self.scale.span

    def categories(self) -> list[str]:
        return sorted({i.category for i in self.items})

    def in_category(self, category: str) -> list[Item]:
        return [i for i in self.items if i.category == category]


def numeric_value(scale: ScaleInfo, value: Any) -> float | None:
    """A value on the scale as a number: itself on numeric scales, 1/0 for a two-label scale's
    first/second label."""
    if value is None:
        return None
    if scale.numeric:
        return float(value)
    return 1.0 if value == scale.values[0] else 0.0


def check_scale(scale: ScaleInfo) -> None:
    if not scale.numeric and len(scale.values) != 2:
        raise EstimateError(
            f"scale {scale.name} has {len(scale.values)} labels; an estimate needs a numeric scale or one of two labels"
        )


def _judge_scale(session: Session, judge: str, scale: str | None) -> tuple[Judge, ScaleInfo]:
    row = session.exec(select(Judge).where(Judge.name == judge)).first()
    if row is None:
        known = ", ".join(session.exec(select(Judge.name).order_by(Judge.name)).all()) or "none"
        raise EstimateError(f"no judge named {judge!r} (known: {known})")
    name = scale or (row.params or {}).get("scale")
    if not name:
        raise EstimateError(f"judge {judge} names no rating scale of its own; give --scale")
    try:
        info = scale_info(session, str(name))
    except LookupError as exc:
        raise EstimateError(str(exc)) from None
    check_scale(info)
    return row, info


def _raters(session: Session, judge: str, scale: str) -> list[str]:
    """The judge asked about, every person, and the judges that declare this scale (for disagreement)."""
    people = [f"{HUMAN}:{n}" for n in session.exec(select(Annotator.name)).all()]
    declared = [
        f"{JUDGE}:{j.name}" for j in session.exec(select(Judge)).all() if (j.params or {}).get("scale") == scale
    ]
    return list(dict.fromkeys([f"{JUDGE}:{judge}", *people, *declared]))


def run_categories(session: Session, run_id: int) -> dict[int, str]:
    """Trajectory id → its task's category, for one run (one query)."""
    rows = session.exec(
        select(Trajectory.id, Task.category)
        .join(Task, Task.id == Trajectory.task_id)  # type: ignore[arg-type]
        .where(Trajectory.run_id == run_id)
    ).all()
    return {tid: cat or NO_CATEGORY for tid, cat in rows if tid is not None}


def _items(session: Session, matrix: RatingMatrix, judge_key: str, categories: dict[int, str]) -> list[Item]:
    adjusted = adjudicated(session, matrix.scale.name, matrix.dimension)
    other_judges = [r for r in matrix.raters if rater_kind(r) == JUDGE and r != judge_key]
    out = []
    for unit in matrix.units:
        if (judge_key, unit) not in matrix.cells:
            continue
        human = adjusted[unit] if unit in adjusted else consensus(matrix, unit)
        tid = trajectory_id(session, unit)
        out.append(
            Item(
                unit,
                categories.get(tid, NO_CATEGORY) if tid is not None else NO_CATEGORY,
                numeric_value(matrix.scale, matrix.cells[(judge_key, unit)]) or 0.0,
                numeric_value(matrix.scale, human),
                {
                    r.split(":", 1)[1]: numeric_value(matrix.scale, matrix.cells[(r, unit)]) or 0.0
                    for r in other_judges
                    if (r, unit) in matrix.cells
                },
                matrix.sources[(judge_key, unit)][1],
            )
        )
    return out


def judged_items(
    session: Session, run_id: int, judge: str, *, scale: str | None = None, dimension: str | None = None
) -> list[JudgedItems]:
    """The run's judged items on the scale, one set per dimension (one for a plain scale)."""
    if session.get(Run, run_id) is None:
        raise EstimateError(f"no run with id {run_id}")
    row, info = _judge_scale(session, judge, scale)
    try:
        matrices = collect(session, info.name, dimension=dimension, raters=_raters(session, row.name, info.name))
    except LookupError as exc:
        raise EstimateError(str(exc)) from None
    categories = run_categories(session, run_id)
    key = f"{JUDGE}:{row.name}"
    out = []
    for m in matrices:
        inside = within_runs(session, m, {run_id})
        items = _items(session, inside, key, categories)
        notes = list(m.notes)
        unjudged = sum(1 for u in inside.units if (key, u) not in inside.cells and inside.values_of(u, HUMAN))
        if unjudged:
            notes.append(f"{unjudged} rated target(s) the judge gave no verdict on are left out")
        out.append(JudgedItems(run_id, row.name, info, m.dimension, items, notes))
    out = [s for s in out if s.items]  # a dimension the judge gives no value on has nothing to estimate
    if not out:
        raise EstimateError(f"judge {row.name} has no verdicts on run {run_id} readable on scale {info.name}")
    return out


def estimates_of(items: list[Item], alpha: float = ppi.DEFAULT_ALPHA) -> ppi.MeanEstimates:
    labelled = [i for i in items if i.human is not None]
    return ppi.estimate_mean(
        [i.human for i in labelled],  # type: ignore[misc]
        [i.judge for i in labelled],
        [i.judge for i in items if i.human is None],
        alpha,
    )


def _arrays(items: list[Item]) -> tuple[list[float], list[float], list[float]]:
    labelled = [i for i in items if i.human is not None]
    return [i.human for i in labelled], [i.judge for i in labelled], [i.judge for i in items if i.human is None]  # type: ignore[misc]


@dataclass
class EstimateReport:
    """Everything ``chainmark estimate`` shows for one scale (dimension)."""

    data: JudgedItems
    overall: ppi.MeanEstimates
    stratified: ppi.Interval
    by_category: dict[str, ppi.MeanEstimates]
    target_width: float | None = None
    more_labels: int | None = None
    alpha: float = ppi.DEFAULT_ALPHA

    def to_dict(self) -> dict[str, Any]:
        d = self.data
        return {
            "run": d.run_id,
            "judge": d.judge,
            "scale": d.scale.name,
            "dimension": d.dimension,
            "kind": "binary" if d.binary else "numeric",
            "confidence": 1 - self.alpha,
            "items": len(d.items),
            "labelled": sum(1 for i in d.items if i.human is not None),
            "overall": self.overall.to_dict(),
            "stratified": self.stratified.to_dict(),
            "by_category": {c: {"items": len(d.in_category(c)), **e.to_dict()} for c, e in self.by_category.items()},
            "target_width": self.target_width,
            "more_labels_for_target": self.more_labels,
            "notes": d.notes,
        }


def estimate_report(
    data: JudgedItems, *, by_category: bool = False, target_width: float | None = None, alpha: float = ppi.DEFAULT_ALPHA
) -> EstimateReport:
    overall = estimates_of(data.items, alpha)
    per_category = {c: estimates_of(data.in_category(c), alpha) for c in data.categories()}
    strata = [(len(data.in_category(c)), e.ppi_plus) for c, e in per_category.items()]
    more = None
    if target_width is not None:
        more = ppi.labels_for_width(*_arrays(data.items), target_width, alpha)
    return EstimateReport(
        data,
        overall,
        ppi.stratified(strata, "stratified ppi++", alpha),
        per_category if by_category else {},
        target_width,
        more,
        alpha,
    )


def verdict_probabilities(session: Session, data: JudgedItems) -> dict[int, float]:
    """Verdict id → the judge's probability of the first label, on two-label scales, for verdicts
    whose score is one (a number in [0, 1]); what the planner and the reliability table use."""
    if not data.binary:
        return {}
    ids = [i.verdict_id for i in data.items if i.verdict_id]
    rows = session.exec(select(Verdict.id, Verdict.score).where(Verdict.id.in_(ids))).all() if ids else []  # type: ignore[union-attr]
    return {vid: float(score) for vid, score in rows if vid is not None and score is not None and 0 <= score <= 1}


def rated_judges(session: Session, run_id: int) -> list[tuple[str, str]]:
    """(judge, scale) pairs worth estimating on a run: a judge's verdicts on targets people rated on that
    scale (the same kind, id and part), with judges that declare their scale first; what the HTML
    report and the TUI panel show without being told a judge."""
    rows = session.exec(
        select(Judge.name, HumanRating.scale)
        .join(Verdict, Verdict.judge_id == Judge.id)  # type: ignore[arg-type]
        .join(
            HumanRating,
            (HumanRating.target_kind == Verdict.target_kind)  # type: ignore[arg-type]
            & (HumanRating.target_id == Verdict.target_id)
            & (HumanRating.target_part == Verdict.target_part),
        )
        .distinct()
    ).all()
    pairs = []
    for judge, scale in sorted(set(rows)):
        try:
            judged_items(session, run_id, judge, scale=scale)
        except EstimateError:
            continue  # not on this run, or a scale with no mean
        pairs.append((judge, scale))
    return pairs
