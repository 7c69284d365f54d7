"""Reads and writes behind the adjudication queue (worker threads, plain data out).

The queue is ``evaluation.agreement``'s disagreement queue over every stored scale; the item view is
``annotation.review``'s rating view unblinded for the reviewer; judges' verdicts are read onto the
scale by the agreement matrix, exactly as ``chainmark adjudicate`` does, so the provenance recorded
(which verdicts were overridden or confirmed) is the same from the TUI and the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select

from annotation.review.adjudication import adjudicate
from annotation.review.blind import RatingView, rating_view
from annotation.review.scales import Scale, ensure_builtin_scales, get_scale
from annotation.review.targets import Target
from evaluation.agreement.contradicted import Flag, FlagKey, contradicted_first, flag_disagreements
from evaluation.agreement.disagreements import Disagreement, disagreements
from evaluation.agreement.matrix import Unit, collect
from evaluation.agreement.matrix import verdict_values as matrix_verdict_values
from store.models import RatingScale
from tui.blind_view import scope_for, visible_matrices
from tui.screens.review.data import ImageRef, target_images
from tui.screens.review.evidence import Evidence, evidence


@dataclass(frozen=True)
class QueueFilter:
    threshold: float = 0.0
    scale: str = ""
    include_adjudicated: bool = False
    contradicted_first: bool = False  # items whose raters contradict the run's score lead the queue


@dataclass(frozen=True)
class FlaggedQueue:
    """The queue in its shown order, with a flag per item about a final answer (the run's score and
    the raters that contradict it)."""

    items: list[Disagreement]
    flags: dict[FlagKey, Flag] = field(default_factory=dict)


@dataclass(frozen=True)
class AdjudicationItem:
    disagreement: Disagreement
    scale: Scale
    view: RatingView
    verdict_values: dict[int, Any]
    images: list[ImageRef] = field(default_factory=list)
    evidence: Evidence = Evidence()  # gold answer and the run's score
    flag: Flag | None = None  # raters contradicting the run's score (None: not about an answer, or hidden)

    @property
    def target(self) -> Target:
        u = self.disagreement.unit
        return Target(u.kind, u.id, u.part)


def scale_names(session: Session) -> list[str]:
    return list(session.exec(select(RatingScale.name).order_by(RatingScale.name)).all())


def disagreement_queue(session: Session, flt: QueueFilter, viewer: str | None = None) -> list[Disagreement]:
    """Every scale's (or one scale's) disagreements beyond the threshold, largest split first; targets
    ``viewer`` still has to rate blind are left out."""
    items: list[Disagreement] = []
    scope = scope_for(session, viewer)
    for name in [flt.scale] if flt.scale else scale_names(session):
        for m in visible_matrices(session, scope, collect(session, name))[0]:
            if m.units:
                items += disagreements(session, m, threshold=flt.threshold, include_adjudicated=flt.include_adjudicated)
    items.sort(key=lambda d: (-d.split, d.unit, d.scale, d.dimension))
    return items


def flagged_queue(session: Session, flt: QueueFilter, viewer: str | None = None) -> FlaggedQueue:
    """``disagreement_queue`` with each answer's contradictions flagged (every run scored once), ordered
    contradicted first when the filter asks."""
    items = disagreement_queue(session, flt, viewer)
    flags = flag_disagreements(session, items)
    return FlaggedQueue(contradicted_first(items, flags) if flt.contradicted_first else items, flags)


def verdict_values(session: Session, scale: str, target: Target) -> dict[int, Any]:
    return matrix_verdict_values(session, scale, Unit(target.kind, target.id, target.part))


def adjudication_item(session: Session, reviewer: str, d: Disagreement, flag: Flag | None = None) -> AdjudicationItem:
    """Everything about ``d`` for the reviewer; ``flag`` (from the queue) carries the run's score, so the
    run is not scored a second time, and is dropped where the run's score is hidden, as the evidence is."""
    target = Target(d.unit.kind, d.unit.id, d.unit.part)
    view = rating_view(session, reviewer, target, d.scale, blind=False)
    known = (flag.score, flag.right) if flag is not None else None
    ev = evidence(session, target, hide_score=bool(view.hidden), known_score=known)
    return AdjudicationItem(
        d,
        get_scale(session, d.scale),
        view,
        verdict_values(session, d.scale, target),
        target_images(session, target, view),
        ev,
        None if ev.score_hidden else flag,
    )


def record_adjudication(session: Session, reviewer: str, item: AdjudicationItem, value: Any, rationale: str) -> int:
    """Store the final value; a value for one dimension of a dimensional scale is stored as that dimension."""
    ensure_builtin_scales(session)
    if (
        item.disagreement.dimension
        and not isinstance(value, dict)
        and not str(value).strip().startswith("{")
        and "=" not in str(value)
    ):
        value = {item.disagreement.dimension: value}
    row = adjudicate(
        session, reviewer, item.target, item.disagreement.scale, value, rationale, verdict_values=item.verdict_values
    )
    return row.id or 0
