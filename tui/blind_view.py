"""Blind mode for listings and statistics: every CLI command and screen that shows ratings or verdicts
outside the rating queue filters them here, through ``annotation.review.blind.blind_scope``.

Targets the acting person still has to rate blind drop out of rating matrices, disagreement queues,
rating and adjudication listings (their own ratings stay), with a note saying how many were held back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # loaded on use: ``runs list`` on SQLite asks this module without SQLAlchemy
    from sqlmodel import Session

    from annotation.review.blind import BlindScope
    from annotation.review.targets import Target

T = TypeVar("T")

HIDDEN_NOTE = "{n} target(s) hidden: {who} still has to rate them blind"


def scope_for(session: Session, actor: str | None) -> BlindScope:
    from annotation.review.blind import blind_scope

    return blind_scope(session, actor)


def _target(unit: Any) -> Target:
    from annotation.review.targets import Target

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


# ------------------------------------------------------------------------------------------------
# Runs: model, endpoint, name and scores of a run with pending blind work (``BlindScope.hides_run``)
# ------------------------------------------------------------------------------------------------

HIDDEN_MODEL = "(hidden)"


def scope_at(app: Any, session: Any = None) -> BlindScope:
    """The blind scope of whoever runs this CLI command (``AppContext.viewer``), read in ``session``
    (an ORM session; without one, in a short read-only session of its own)."""
    from annotation.review.blind import blind_scope

    if session is not None:
        return blind_scope(session, app.viewer)
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        return blind_scope(s, app.viewer)


def listing_scope(app: Any, reader: Any) -> BlindScope | None:
    """``scope_at`` for a listing read through a plain reader (``AppContext.reading``): None, with no
    ORM loaded, when the viewer has no blind assignment at all (the common case)."""
    return scope_at(app) if _has_blind_work(reader, app.viewer) else None


_BLIND_WORK = (
    "SELECT count(*) FROM assignment JOIN annotator ON annotator.id = assignment.annotator_id "
    "WHERE annotator.name = :name AND assignment.blind"
)


def _has_blind_work(reader: Any, viewer: str) -> bool:
    """Whether ``viewer`` has any blind assignment at all, done or not (one plain query)."""
    from store.sql import scalar

    return bool(scalar(reader, _BLIND_WORK, {"name": viewer}))


def redact_run_row(scope: BlindScope | None, row: dict[str, Any]) -> dict[str, Any]:
    """A run listing row (``id``, ``name``, ``endpoint``) without who made the run when it is hidden;
    ``hidden`` carries the reason (no such key when nothing is: the listing stays as it was)."""
    if scope is None or not scope.hides_run(row.get("id")):
        return row
    return {**row, "name": None, "endpoint": None, "model": None, "hidden": scope.why_hidden([row.get("id")])}


def withhold_results(scope: BlindScope, results: list[Any]) -> list[Any]:
    """Compare inputs (``evaluation.compare.RunResults``) with hidden runs' model and scores taken out."""
    from evaluation.compare import withhold

    return [withhold(r, scope.why_hidden([r.run_id])) if scope.hides_run(r.run_id) else r for r in results]


def visible_report_runs(scope: BlindScope, run_ids: list[int]) -> tuple[list[int], str]:
    """The runs a report may show (hidden runs are left out whole) and the note saying why ("" if none)."""
    hidden = scope.hidden_runs(run_ids)
    note = scope.why_hidden(run_ids, what=f"run{'s' if len(hidden) > 1 else ''} left out of this report")
    return [r for r in run_ids if r not in hidden], note


def withheld_reason(app: Any, run_ids: Iterable[int], what: str) -> str:
    """Why the command's viewer may not have ``what`` of these runs ("" when they may): commands that
    would hand over a whole run (its export, a conformance diff of its scores) refuse with this line."""
    return scope_at(app).why_hidden(run_ids, what=what)
