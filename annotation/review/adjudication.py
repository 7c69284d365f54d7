"""Adjudication: a reviewer's final value for a disputed target, with its provenance.

The originals are never touched. The adjudication row records the final value, the rationale and
which current ratings and judge verdicts it overrode (their value differs from the final one) and
which it confirmed. Verdicts are judged by the caller: it passes ``verdict_values`` (verdict id →
value read on this scale), because reading a judge's output onto a scale is the evaluation side's
business and this package does not import it. A later adjudication of the same target supersedes an
earlier one; both stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, select, col

from annotation.review.annotators import get_annotator, require_reviewer
from annotation.review.errors import ReviewError
from annotation.review.ratings import ratings
from annotation.review.scales import ensure_builtin_scales, get_scale, normalize_value
from annotation.review.targets import Target, check_exists
from store.models import Adjudication, Annotator


def _differs(final: Any, other: Any) -> bool:
    """Dimensional values differ when any dimension both have differs; scalars when unequal."""
    if isinstance(final, dict) and isinstance(other, dict):
        common = set(final) & set(other)
        return any(final[k] != other[k] for k in common) if common else True
    return final != other


def adjudicate(
    session: Session,
    reviewer: str,
    target: Target,
    scale: str,
    value: Any,
    rationale: str,
    *,
    verdict_values: Mapping[int, Any] | None = None,
) -> Adjudication:
    ensure_builtin_scales(session)
    person = get_annotator(session, reviewer)
    require_reviewer(person)
    if not (rationale or "").strip():
        raise ReviewError("an adjudication needs a rationale (--rationale)")
    spec = get_scale(session, scale)
    check_exists(session, target)
    final = normalize_value(spec, value, where=f"adjudication of {target.label()} on {scale}")
    current = ratings(session, target=target, scale=spec.name)
    verdict_values = dict(verdict_values or {})
    overrides = {
        "ratings": [r.id for r in current if _differs(final, r.value)],
        "verdicts": sorted(vid for vid, v in verdict_values.items() if _differs(final, v)),
        "confirmed": {
            "ratings": [r.id for r in current if not _differs(final, r.value)],
            "verdicts": sorted(vid for vid, v in verdict_values.items() if not _differs(final, v)),
        },
        "stale_ratings": [r.id for r in current if r.stale],
    }
    row = Adjudication(
        reviewer_id=person.id or 0,
        target_kind=target.kind,
        target_id=target.id,
        target_part=target.part,
        scale=spec.name,
        final_value=final,
        rationale=rationale.strip(),
        overrides=overrides,
    )
    session.add(row)
    session.flush()
    return row


def withdraw_adjudication(session: Session, reviewer: str, adjudication_id: int) -> dict[str, Any]:
    """Take an adjudication back (a reviewer's decision can be revisited). The row goes; the audit trail
    keeps it whole, with who withdrew it. A newer adjudication of the target replaces one instead."""
    person = get_annotator(session, reviewer)
    require_reviewer(person)
    row = session.get(Adjudication, adjudication_id)
    if row is None:
        raise ReviewError(f"no adjudication {adjudication_id}")
    snapshot = {
        "id": row.id,
        "target": Target(row.target_kind, row.target_id, row.target_part).to_dict(),
        "scale": row.scale,
        "final_value": row.final_value,
    }
    session.delete(row)
    session.flush()
    return snapshot


@dataclass(frozen=True)
class AdjudicationInfo:
    id: int
    reviewer: str
    target: Target
    scale: str
    final_value: Any
    rationale: str | None
    overrides: dict[str, Any]
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "reviewer": self.reviewer,
            "target": self.target.to_dict(),
            "scale": self.scale,
            "final_value": self.final_value,
            "rationale": self.rationale,
            "overrides": self.overrides,
            "created_at": self.created_at,
        }


def adjudications(
    session: Session, *, target: Target | None = None, scale: str | None = None
) -> list[AdjudicationInfo]:
    stmt = select(Adjudication, Annotator.name).join(Annotator, col(Annotator.id) == col(Adjudication.reviewer_id))
    if target is not None:
        stmt = stmt.where(
            Adjudication.target_kind == target.kind,
            Adjudication.target_id == target.id,
            Adjudication.target_part == target.part,
        )
    if scale is not None:
        stmt = stmt.where(Adjudication.scale == scale)
    return [
        AdjudicationInfo(
            a.id or 0,
            name,
            Target(a.target_kind, a.target_id, a.target_part),
            a.scale,
            a.final_value,
            a.rationale,
            dict(a.overrides or {}),
            a.created_at.isoformat(),
        )
        for a, name in session.exec(stmt.order_by(col(Adjudication.id))).all()
    ]
