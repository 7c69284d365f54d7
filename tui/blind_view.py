"""Blind mode for listings and statistics: every CLI command and screen that shows ratings or verdicts
outside the rating queue filters them here, through ``annotation.review.blind.blind_scope``.

Targets the acting person still has to rate blind drop out of rating matrices, disagreement queues,
rating and adjudication listings (their own ratings stay), with a note saying how many were held back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from sqlmodel import Session

from annotation.review.blind import BlindScope, blind_scope
from annotation.review.targets import Target

T = TypeVar("T")

HIDDEN_NOTE = "{n} target(s) hidden: {who} still has to rate them blind"


def scope_for(session: Session, actor: str | None) -> BlindScope:
    return blind_scope(session, actor)


def _target(unit: Any) -> Target:
    return Target(unit.kind, unit.id, unit.part)


def visible_matrices(session: Session, scope: BlindScope, matrices: list[T]) -> tuple[list[T], int]:
    """Matrices without the units the actor may not see yet, and how many targets were held back."""
    if not scope.active:
        return matrices, 0
    out: list[Any] = []
    dropped: set[Any] = set()
    for m in matrices:
        units = m.units  # type: ignore[attr-defined]
        keep = [u for u in units if not scope.hides(session, _target(u))]
        if len(keep) != len(units):
            dropped |= set(units) - set(keep)
            m = m.restrict(keep)  # type: ignore[attr-defined]
            m.notes.append(HIDDEN_NOTE.format(n=len(units) - len(keep), who=scope.actor))  # type: ignore[attr-defined]
        out.append(m)
    return out, len(dropped)


def visible_units(session: Session, scope: BlindScope, items: Iterable[T], unit_of: Any) -> tuple[list[T], int]:
    """Items (disagreements, adjudications) whose target the actor may see, and how many were held back."""
    items = list(items)
    if not scope.active:
        return items, 0
    keep = [i for i in items if not scope.hides(session, _target(unit_of(i)))]
    return keep, len(items) - len(keep)


def visible_ratings(session: Session, scope: BlindScope, rows: Iterable[T]) -> tuple[list[T], int]:
    """Ratings the actor may see: their own, and others' on targets not hidden."""
    rows = list(rows)
    if not scope.active:
        return rows, 0
    keep = [r for r in rows if scope.shows_rating_by(session, r.annotator, r.target)]  # type: ignore[attr-defined]
    return keep, len(rows) - len(keep)
