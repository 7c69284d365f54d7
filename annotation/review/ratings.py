"""Human ratings: one row per act of rating, never edited in place.

Rating a target again adds a new row; the newest row per (annotator, target, scale) is the current
rating and earlier ones stay as history (adjudications may point at them). Each rating records the
task revision it saw; when the task is edited later, the rating is *stale*.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlmodel import Session, select, col

from annotation.review.annotators import add_annotator, get_annotator
from annotation.review.errors import ReviewError
from annotation.review.scales import ensure_builtin_scales, get_scale, normalize_value
from annotation.review.targets import Target, check_exists, task_of
from store.models import Annotator, Assignment, HumanRating, Task, utcnow


@dataclass(frozen=True)
class RatingInfo:
    """A rating as plain data, with whether it is current and whether its task has moved on."""

    id: int
    annotator: str
    target: Target
    scale: str
    value: Any
    comment: str | None
    blind: bool
    task_id: int | None
    task_revision: int | None
    current_revision: int | None
    current: bool
    created_at: str

    @property
    def stale(self) -> bool:
        return (
            self.task_revision is not None
            and self.current_revision is not None
            and self.task_revision < self.current_revision
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "annotator": self.annotator,
            "target": self.target.to_dict(),
            "scale": self.scale,
            "value": self.value,
            "comment": self.comment,
            "blind": self.blind,
            "task_id": self.task_id,
            "task_revision": self.task_revision,
            "current_revision": self.current_revision,
            "current": self.current,
            "stale": self.stale,
            "created_at": self.created_at,
        }


def rate(
    session: Session,
    annotator: str,
    scale: str,
    target: Target,
    value: Any,
    *,
    comment: str | None = None,
    blind: bool | None = None,
) -> HumanRating:
    """Record a rating; closes the annotator's assignment for it and inherits its blind flag."""
    ensure_builtin_scales(session)
    person = get_annotator(session, annotator)
    spec = get_scale(session, scale)
    check_exists(session, target)
    stored = normalize_value(spec, value, where=f"rating of {target.label()} on {scale}")
    task = task_of(session, target)
    assignment = _assignment(session, person, target, scale)
    if assignment is not None:
        assignment.status = "done"
        if blind is None:
            blind = assignment.blind
    row = HumanRating(
        annotator_id=person.id or 0,
        target_kind=target.kind,
        target_id=target.id,
        target_part=target.part,
        scale=spec.name,
        value=stored,
        comment=comment or None,
        blind=bool(blind),
        task_id=task.id if task else None,
        task_revision=task.revision if task else None,
        created_at=utcnow(),
        updated_at=utcnow(),
    )
    session.add(row)
    session.flush()
    return row


def _assignment(session: Session, person: Annotator, target: Target, scale: str) -> Assignment | None:
    return session.exec(
        select(Assignment).where(
            Assignment.annotator_id == person.id,
            Assignment.target_kind == target.kind,
            Assignment.target_id == target.id,
            Assignment.target_part == target.part,
            Assignment.scale == scale,
        )
    ).first()


def ratings(
    session: Session,
    *,
    target: Target | None = None,
    scale: str | None = None,
    annotator: str | None = None,
    current_only: bool = True,
) -> list[RatingInfo]:
    """Ratings as plain data in id order; by default only each annotator's current one per target."""
    stmt = select(HumanRating, Annotator.name).join(Annotator, col(Annotator.id) == col(HumanRating.annotator_id))
    if target is not None:
        stmt = stmt.where(
            HumanRating.target_kind == target.kind,
            HumanRating.target_id == target.id,
            HumanRating.target_part == target.part,
        )
    if scale is not None:
        stmt = stmt.where(HumanRating.scale == scale)
    if annotator is not None:
        stmt = stmt.where(Annotator.name == annotator)
    rows = session.exec(stmt.order_by(col(HumanRating.id))).all()
    latest: dict[tuple, int] = {}
    for r, _ in rows:
        latest[(r.annotator_id, r.target_kind, r.target_id, r.target_part, r.scale)] = r.id or 0
    task_ids = {r.task_id for r, _ in rows if r.task_id is not None}
    revisions = (
        dict(session.exec(select(Task.id, Task.revision).where(Task.id.in_(task_ids))).all()) if task_ids else {}  # type: ignore[union-attr]
    )
    out = []
    for r, name in rows:
        is_current = latest[(r.annotator_id, r.target_kind, r.target_id, r.target_part, r.scale)] == r.id
        if current_only and not is_current:
            continue
        out.append(
            RatingInfo(
                id=r.id or 0,
                annotator=name,
                target=Target(r.target_kind, r.target_id, r.target_part),
                scale=r.scale,
                value=r.value,
                comment=r.comment,
                blind=r.blind,
                task_id=r.task_id,
                task_revision=r.task_revision,
                current_revision=revisions.get(r.task_id) if r.task_id is not None else None,
                current=is_current,
                created_at=r.created_at.isoformat(),
            )
        )
    return out


def stale_ratings(session: Session, scale: str | None = None) -> list[RatingInfo]:
    """Current ratings made on an older revision of their task than the one stored now."""
    return [r for r in ratings(session, scale=scale) if r.stale]


# ------------------------------------------------------------------------------------------------
# Scriptable import of existing labels
# ------------------------------------------------------------------------------------------------

IMPORT_COLUMNS = ("annotator", "scale", "target_kind", "target_id")


def import_ratings_csv(session: Session, path: str | Path, *, create_annotators: bool = False) -> list[HumanRating]:
    """Import ratings from a CSV with columns annotator, scale, target_kind, target_id, [target_part],
    value (or one column per dimension of the scale), [comment], [blind].

    Every row is checked before anything is written; the first bad row raises an error naming the
    file, the line and the column, and the caller's transaction writes nothing.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in IMPORT_COLUMNS if c not in header]
        if missing:
            raise ReviewError(f"{path}: missing column(s) {', '.join(missing)} (have: {', '.join(header)})")
        records = [({(k or "").strip(): (v or "").strip() for k, v in row.items()}, reader.line_num) for row in reader]
    ensure_builtin_scales(session)
    out = []
    for rec, line in records:
        where = f"{path.name} line {line}"
        name = rec["annotator"]
        if not name:
            raise ReviewError(f"{where}: column annotator is empty")
        if create_annotators and _missing_annotator(session, name):
            add_annotator(session, name)
        try:
            spec = get_scale(session, rec["scale"])
            target = Target(rec["target_kind"], _int(rec["target_id"], where, "target_id"), rec.get("target_part", ""))
            raw = _raw_value(rec, spec.dimensions, where)
            out.append(
                rate(
                    session,
                    name,
                    spec.name,
                    target,
                    raw,
                    comment=rec.get("comment") or None,
                    blind=_flag(rec.get("blind")),
                )
            )
        except ReviewError as exc:
            raise ReviewError(f"{where}: {exc}") from None
    return out


def _missing_annotator(session: Session, name: str) -> bool:
    return session.exec(select(Annotator.id).where(Annotator.name == name)).first() is None


def _int(text: str, where: str, column: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ReviewError(f"{where}: column {column} must be a whole number, got {text!r}") from None


def _flag(text: str | None) -> bool | None:
    if not text:
        return None
    return text.lower() in {"1", "true", "yes", "y"}


def _raw_value(rec: dict[str, str], dimensions: list[str], where: str) -> Any:
    if rec.get("value"):
        return rec["value"]
    dims = {d: rec[d] for d in dimensions if rec.get(d)}
    if dims:
        return dims
    want = "value" + (f" or one of {', '.join(dimensions)}" if dimensions else "")
    raise ReviewError(f"{where}: column {want} is empty")


def value_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
