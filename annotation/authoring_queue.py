"""Authoring assignments: which tasks an annotator is to write or fix (their queue).

Stored as ``Assignment`` rows with ``target_kind="task"`` and the scale ``AUTHORING``, the same table
rating assignments use, so "who has what" is one query for both. A task is still to do while it
needs an author's work (``draft`` or ``rejected``); submitted and verified tasks stay listed as done.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, select

from annotation.review.annotators import get_annotator
from annotation.tasks import AuthoringError
from store.models import Assignment, Benchmark, Task

AUTHORING = "authoring"
NEEDS_WORK = ("draft", "rejected")


@dataclass(frozen=True)
class QueueItem:
    task_id: int
    source_id: str
    benchmark: str
    status: str
    query: str

    @property
    def to_do(self) -> bool:
        return self.status in NEEDS_WORK


def assign_tasks(session: Session, annotator: str, task_ids: list[int]) -> list[int]:
    """Give ``task_ids`` to ``annotator`` for authoring; returns the ids newly assigned (a task
    already in their queue is left as it is). Unknown task ids are refused, naming them."""
    person = get_annotator(session, annotator)
    wanted = list(dict.fromkeys(task_ids))
    known = set()
    for start in range(0, len(wanted), 500):  # stay far below any SQL parameter limit
        chunk = wanted[start : start + 500]
        known |= set(session.exec(select(Task.id).where(Task.id.in_(chunk))).all())  # type: ignore[union-attr]
    missing = [t for t in wanted if t not in known]
    if missing:
        raise AuthoringError(
            f"no task with id {', '.join(map(str, missing[:10]))}"
            + (f" (and {len(missing) - 10} more)" if len(missing) > 10 else "")
        )
    have = set(
        session.exec(
            select(Assignment.target_id).where(
                Assignment.annotator_id == person.id, Assignment.target_kind == "task", Assignment.scale == AUTHORING
            )
        ).all()
    )
    new = [t for t in wanted if t not in have]
    assert person.id is not None
    for task_id in new:
        session.add(
            Assignment(annotator_id=person.id, target_kind="task", target_id=task_id, scale=AUTHORING, blind=False)
        )
    session.flush()
    return new


def unassign_tasks(session: Session, annotator: str, task_ids: list[int]) -> int:
    """Take tasks out of an annotator's queue; returns how many were in it."""
    person = get_annotator(session, annotator)
    rows = session.exec(
        select(Assignment).where(
            Assignment.annotator_id == person.id,
            Assignment.target_kind == "task",
            Assignment.scale == AUTHORING,
            Assignment.target_id.in_(task_ids),  # type: ignore[attr-defined]
        )
    ).all()
    for row in rows:
        session.delete(row)
    session.flush()
    return len(rows)


def queue_of(session: Session, annotator: str) -> list[QueueItem]:
    """The annotator's authoring queue in task order: what is still to do first, then what is done."""
    person = get_annotator(session, annotator)
    rows = session.exec(
        select(Task.id, Task.source_id, Benchmark.name, Task.status, Task.query)  # type: ignore[call-overload]
        .join(Benchmark, Benchmark.id == Task.benchmark_id)
        .join(Assignment, Assignment.target_id == Task.id)
        .where(Assignment.annotator_id == person.id, Assignment.target_kind == "task", Assignment.scale == AUTHORING)
        .order_by(Task.id)
    ).all()
    items = [QueueItem(int(i), str(sid), str(b), str(st), str(q)) for i, sid, b, st, q in rows]
    return [i for i in items if i.to_do] + [i for i in items if not i.to_do]
