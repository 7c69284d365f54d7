"""Hand targets to annotators so that each target is rated by ``overlap`` different people.

Balanced and deterministic: each target goes to the annotators with the fewest open assignments
so far (ties broken by the order given), so load stays even and re-running the same command adds
nothing. Targets that already have some assignees on the scale only get the missing ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, select, col

from annotation.review.annotators import get_annotator
from annotation.review.errors import ReviewError
from annotation.review.scales import ensure_builtin_scales, get_scale
from annotation.review.targets import Target, check_exists
from store.models import PREFERENCE_SCALE, Annotator, Assignment


@dataclass(frozen=True)
class AssignmentInfo:
    id: int
    annotator: str
    target: Target
    scale: str
    blind: bool
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "annotator": self.annotator,
            "target": self.target.to_dict(),
            "scale": self.scale,
            "blind": self.blind,
            "status": self.status,
        }


def assign(
    session: Session, scale: str, targets: list[Target], annotators: list[str], overlap: int, *, blind: bool = True
) -> list[Assignment]:
    """Create the assignments needed so every target has ``overlap`` assignees; returns the new ones."""
    ensure_builtin_scales(session)
    spec = get_scale(session, scale)
    people = assign_people(session, annotators, overlap)
    if not targets:
        raise ReviewError("no targets to assign")
    for t in targets:
        check_exists(session, t)
    return distribute(session, spec.name, targets, people, overlap, blind=blind)


def assign_people(session: Session, annotators: list[str], overlap: int) -> list[Annotator]:
    """The named annotators (each once), checked against the overlap wanted."""
    people = [get_annotator(session, n) for n in dict.fromkeys(a.strip() for a in annotators if a.strip())]
    if overlap < 1:
        raise ReviewError("--overlap must be at least 1")
    if overlap > len(people):
        raise ReviewError(f"overlap {overlap} needs at least {overlap} annotators; got {len(people)}")
    return people


def distribute(
    session: Session, scale: str, targets: list[Target], people: list[Annotator], overlap: int, *, blind: bool = True
) -> list[Assignment]:
    """The balancing itself, for any kind of work filed under ``scale`` (rating scales, and pairwise
    preferences): each target goes to the least-loaded people who do not hold it yet."""
    existing = session.exec(select(Assignment).where(Assignment.scale == scale)).all()
    load = {p.id: 0 for p in people}
    holders: dict[tuple[str, int, str], set[int]] = {}
    for a in existing:
        holders.setdefault((a.target_kind, a.target_id, a.target_part), set()).add(a.annotator_id)
        if a.annotator_id in load and a.status == "open":
            load[a.annotator_id] += 1
    order = {p.id: i for i, p in enumerate(people)}
    created = []
    for t in targets:
        have = holders.setdefault((t.kind, t.id, t.part), set())
        need = overlap - len(have & set(load))
        candidates = sorted((p for p in people if p.id not in have), key=lambda p: (load[p.id], order[p.id]))
        for p in candidates[: max(need, 0)]:
            row = Assignment(
                annotator_id=p.id or 0, target_kind=t.kind, target_id=t.id, target_part=t.part, scale=scale, blind=blind
            )
            session.add(row)
            created.append(row)
            have.add(p.id or 0)
            load[p.id] += 1
    session.flush()
    return created


def assignments(
    session: Session, *, annotator: str | None = None, status: str | None = None, scale: str | None = None
) -> list[AssignmentInfo]:
    """Rating assignments (preference items only when ``scale`` names them)."""
    stmt = select(Assignment, Annotator.name).join(Annotator, col(Annotator.id) == col(Assignment.annotator_id))
    if annotator is not None:
        stmt = stmt.where(Annotator.name == annotator)
    if status is not None:
        stmt = stmt.where(Assignment.status == status)
    if scale is not None:
        stmt = stmt.where(Assignment.scale == scale)
    else:  # pairwise preference items have their own queue (annotation.review.preferences)
        stmt = stmt.where(Assignment.scale != PREFERENCE_SCALE)
    return [
        AssignmentInfo(a.id or 0, name, Target(a.target_kind, a.target_id, a.target_part), a.scale, a.blind, a.status)
        for a, name in session.exec(stmt.order_by(col(Assignment.id))).all()
    ]
