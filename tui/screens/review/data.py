"""Read and write functions behind the rating queue, run in worker threads, returning plain data.

What a rater may see comes from ``annotation.review.rating_view`` (the blind rules live there); this
module adds what the screen needs around it: the queue order, progress per annotator, the
benchmark's guidelines, which images to show, and an undo for the rating just made.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select, col

from annotation.review.annotators import get_annotator
from annotation.review.assignments import assignments
from annotation.review.blind import RatingView, rating_view
from annotation.review.errors import ReviewError
from annotation.review.ratings import rate
from annotation.review.scales import Scale, get_scale
from annotation.review.targets import Target, task_of
from store.models import (
    Adjudication,
    Annotator,
    Asset,
    Assignment,
    Benchmark,
    Checkpoint,
    CheckpointResult,
    HumanRating,
    TaskAsset,
)
from tui.screens.review.evidence import Evidence, evidence
from tui.widgets.review.event_text import event_assets


@dataclass(frozen=True)
class QueueEntry:
    assignment_id: int
    target: Target
    scale: str
    blind: bool
    status: str


@dataclass(frozen=True)
class QueueState:
    """The annotator's assignments in order, and done/assigned counts for everyone on these scales."""

    annotator: str
    role: str
    entries: list[QueueEntry]
    progress: list[tuple[str, int, int]]

    @property
    def done(self) -> int:
        return sum(1 for e in self.entries if e.status == "done")

    def first_open(self) -> int:
        return next((i for i, e in enumerate(self.entries) if e.status != "done"), 0)


@dataclass(frozen=True)
class ImageRef:
    caption: str
    asset_id: int
    sha256: str


@dataclass(frozen=True)
class RatingItem:
    entry: QueueEntry
    scale: Scale
    view: RatingView
    guidelines: str
    images: list[ImageRef] = field(default_factory=list)
    evidence: Evidence = Evidence()  # gold answer and the run's score (the score hidden while blind)


def rating_queue(session: Session, annotator: str, scale: str | None = None) -> QueueState:
    person = get_annotator(session, annotator)
    mine = assignments(session, annotator=person.name, scale=scale)
    entries = [QueueEntry(a.id, a.target, a.scale, a.blind, a.status) for a in mine]
    scales = {e.scale for e in entries} if scale is None else {scale}
    assigned: Counter[str] = Counter()
    done: Counter[str] = Counter()
    for a in assignments(session):
        if a.scale in scales:
            assigned[a.annotator] += 1
            done[a.annotator] += a.status == "done"
    progress = [(name, done[name], assigned[name]) for name in sorted(assigned)]
    return QueueState(person.name, person.role, entries, progress)


def target_images(session: Session, target: Target, view: RatingView) -> list[ImageRef]:
    refs: list[tuple[str, int]] = []
    task = view.content.get("task") or {}
    if task.get("id"):
        links = session.exec(
            select(TaskAsset)
            .where(TaskAsset.task_id == task["id"], TaskAsset.role == "query_image")
            .order_by(col(TaskAsset.ordinal), col(TaskAsset.id))
        ).all()
        refs += [(f"query image {i + 1}", link.asset_id) for i, link in enumerate(links)]
    events = list(view.content.get("events") or [])
    for key in ("event", "matched_event"):
        if view.content.get(key):
            events.append(view.content[key])
    for e in events:
        refs += [(f"event {e.get('ordinal')} ({e.get('kind')})", a) for a in event_assets(e.get("payload"))]
    if target.kind == "checkpoint_result":
        cr = session.get(CheckpointResult, target.id)
        cp = session.get(Checkpoint, cr.checkpoint_id) if cr else None
        if cp is not None and cp.gt_asset_id:
            refs.append((f"checkpoint {cp.key} ground truth", cp.gt_asset_id))
    out = []
    seen: set[int] = set()
    for caption, asset_id in refs:
        asset = session.get(Asset, asset_id)
        if asset is None or asset_id in seen or not asset.mime.startswith("image/"):
            continue
        seen.add(asset_id)
        out.append(ImageRef(caption, asset_id, asset.sha256))
    return out


def rating_item(session: Session, annotator: str, entry: QueueEntry) -> RatingItem:
    view = rating_view(session, annotator, entry.target, entry.scale)
    task = task_of(session, entry.target)
    guidelines = ""
    if task is not None:
        bench = session.get(Benchmark, task.benchmark_id)
        guidelines = (bench.guidelines or "") if bench else ""
    return RatingItem(
        entry,
        get_scale(session, entry.scale),
        view,
        guidelines,
        target_images(session, entry.target, view),
        evidence(session, entry.target, hide_score=bool(view.hidden)),
    )


def submit_rating(session: Session, annotator: str, entry: QueueEntry, value: Any, comment: str | None) -> int:
    """Store the rating (this also closes the assignment); returns the new rating's id."""
    row = rate(session, annotator, entry.scale, entry.target, value, comment=comment)
    return row.id or 0


def undo_rating(session: Session, rating_id: int) -> None:
    """Take back a rating just made: delete the row and reopen the assignment if nothing else rates it.

    Refused once an adjudication cites the rating, because provenance must not point at nothing.
    """
    row = session.get(HumanRating, rating_id)
    if row is None:
        raise ReviewError(f"rating {rating_id} is gone already")
    for adj in session.exec(
        select(Adjudication).where(
            Adjudication.target_kind == row.target_kind,
            Adjudication.target_id == row.target_id,
            Adjudication.target_part == row.target_part,
        )
    ).all():
        cited = adj.overrides or {}
        ids = set(cited.get("ratings") or []) | set((cited.get("confirmed") or {}).get("ratings") or [])
        if rating_id in ids:
            raise ReviewError(f"rating {rating_id} is cited by adjudication {adj.id}; it can no longer be undone")
    session.delete(row)
    session.flush()
    still = session.exec(
        select(HumanRating.id).where(
            HumanRating.annotator_id == row.annotator_id,
            HumanRating.target_kind == row.target_kind,
            HumanRating.target_id == row.target_id,
            HumanRating.target_part == row.target_part,
            HumanRating.scale == row.scale,
        )
    ).first()
    if still is None:
        for a in session.exec(
            select(Assignment).where(
                Assignment.annotator_id == row.annotator_id,
                Assignment.target_kind == row.target_kind,
                Assignment.target_id == row.target_id,
                Assignment.target_part == row.target_part,
                Assignment.scale == row.scale,
            )
        ).all():
            a.status = "open"
    session.flush()


def annotator_names(session: Session) -> list[str]:
    return list(session.exec(select(Annotator.name).order_by(Annotator.name)).all())


def trajectory_id_of(session: Session, target: Target) -> int | None:
    """The trajectory a rated target lives in, for opening it in the trajectory viewer."""
    from annotation.review.targets import trajectory_of

    traj = trajectory_of(session, target)
    return traj.id if traj is not None else None
