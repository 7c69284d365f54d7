"""What can be rated, and which task (and revision) a rated target belongs to.

A target is ``(kind, id, part)``, the same triple judges' verdicts use. ``block_question`` and
``image_question`` point at the trajectory whose output holds the block/image, with the question in
``part`` (e.g. ``"block:3/q:1"``); ``verdict`` lets a person rate a judge's report itself (ATP-Bench's
human agreement study rates how far they agree with each judge's report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select, col

from annotation.review.errors import ReviewError
from annotation.vocab import TARGET_KINDS  # noqa: F401  (one list, shared with the command line)
from store.models import CheckpointResult, Event, Task, Trajectory, Verdict


@dataclass(frozen=True, order=True)
class Target:
    kind: str
    id: int
    part: str = ""

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ReviewError(f"target kind must be one of {', '.join(TARGET_KINDS)}; got {self.kind!r}")

    def label(self) -> str:
        return f"{self.kind}:{self.id}" + (f"[{self.part}]" if self.part else "")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "part": self.part}


def parse_target_ids(text: str) -> list[tuple[int, str]]:
    """'3,4,7@block:2' → [(3, ''), (4, ''), (7, 'block:2')]; a part follows '@'."""
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        ident, _, part = item.partition("@")
        try:
            out.append((int(ident), part))
        except ValueError:
            raise ReviewError(f"target id {ident!r} is not a number (write ids like 3,4,7@block:2)") from None
    if not out:
        raise ReviewError("no target ids given")
    return out


def _row(session: Session, target: Target) -> Any:
    model = {
        "trajectory": Trajectory,
        "block_question": Trajectory,
        "image_question": Trajectory,
        "event": Event,
        "checkpoint_result": CheckpointResult,
        "task": Task,
        "verdict": Verdict,
    }[target.kind]
    row = session.get(model, target.id)
    if row is None:
        raise ReviewError(f"no {model.__tablename__} with id {target.id} (target {target.label()})")
    return row


def trajectory_of(session: Session, target: Target) -> Trajectory | None:
    """The trajectory a target lives in (None for a task)."""
    row = _row(session, target)
    if isinstance(row, Trajectory):
        return row
    if isinstance(row, (Event, CheckpointResult)):
        return session.get(Trajectory, row.trajectory_id)
    if isinstance(row, Verdict):
        return trajectory_of(session, Target(row.target_kind, row.target_id, row.target_part))
    return None


def task_of(session: Session, target: Target) -> Task | None:
    """The task whose revision a rating of this target depends on."""
    row = _row(session, target)
    if isinstance(row, Task):
        return row
    traj = trajectory_of(session, target)
    return session.get(Task, traj.task_id) if traj is not None else None


def check_exists(session: Session, target: Target) -> None:
    _row(session, target)


def targets_of_run(session: Session, run_id: int, kind: str) -> list[Target]:
    """Every target of a kind in a run; question targets and verdicts come from the verdicts stored."""
    if kind not in TARGET_KINDS:
        raise ReviewError(f"target kind must be one of {', '.join(TARGET_KINDS)}; got {kind!r}")
    trajs = session.exec(select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.id))).all()
    if not trajs:
        raise ReviewError(f"run {run_id} has no trajectories")
    ids = [t.id for t in trajs]
    if kind == "trajectory":
        return [Target(kind, t.id or 0) for t in trajs]
    if kind == "task":
        return [Target(kind, tid) for tid in sorted({t.task_id for t in trajs})]
    if kind == "event":
        rows = session.exec(select(Event.id).where(col(Event.trajectory_id).in_(ids)).order_by(col(Event.id))).all()
        return [Target(kind, i) for i in rows]  # type: ignore[arg-type]
    if kind == "checkpoint_result":
        rows = session.exec(
            select(CheckpointResult.id)
            .where(col(CheckpointResult.trajectory_id).in_(ids))
            .order_by(col(CheckpointResult.id))
        ).all()
        return [Target(kind, i) for i in rows]  # type: ignore[arg-type]
    if kind == "verdict":
        events = session.exec(select(Event.id).where(col(Event.trajectory_id).in_(ids))).all()
        results = session.exec(select(CheckpointResult.id).where(col(CheckpointResult.trajectory_id).in_(ids))).all()
        inside = sa.or_(
            sa.and_(
                col(Verdict.target_kind).in_(("trajectory", "block_question", "image_question")),
                col(Verdict.target_id).in_(ids),
            ),
            sa.and_(col(Verdict.target_kind) == "event", col(Verdict.target_id).in_(events)),
            sa.and_(col(Verdict.target_kind) == "checkpoint_result", col(Verdict.target_id).in_(results)),
        )
        return [Target(kind, i) for i in session.exec(select(Verdict.id).where(inside).order_by(Verdict.id)).all()]  # type: ignore[arg-type]
    parts = session.exec(
        select(Verdict.target_id, Verdict.target_part)
        .where(col(Verdict.target_kind) == kind, col(Verdict.target_id).in_(ids))
        .distinct()
    ).all()
    return sorted(Target(kind, tid, part) for tid, part in parts)
