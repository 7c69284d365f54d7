"""Pairwise preferences: people judge two runs' answers to the same task as A better, B better or tie.

Work is handed out with the rating machinery (``assignments.distribute``): an item is an Assignment on
target ``task:<id>`` with part ``pair:<run_a>-<run_b>`` under the pseudo-scale ``preference``, so
overlap and load balancing are the ratings' own. What a person sees is blind: the two answers are
labelled A and B only, in an order drawn per person and item (stable across sessions, so reopening an
item never swaps the sides), with no run or model name and no verdicts; names of the runs and their
models that appear inside answers are masked too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from annotation.review.annotators import get_annotator
from annotation.review.assignments import assign_people, distribute
from annotation.review.errors import ReviewError
from annotation.review.targets import Target
from store.models import (
    PREFERENCE_SCALE,
    Annotator,
    Assignment,
    Benchmark,
    Event,
    ModelEndpoint,
    Preference,
    Run,
    Task,
    TaskAsset,
    Trajectory,
    preference_pair_part,
    utcnow,
)
from annotation.vocab import PREFERENCE_CHOICES

SHOWN_CHOICES = PREFERENCE_CHOICES
MASK = "[model]"


def parse_pair_part(part: str) -> tuple[int, int]:
    """``pair:3-7`` → (3, 7)."""
    try:
        lo, hi = part.removeprefix("pair:").split("-")
        return int(lo), int(hi)
    except ValueError:
        raise ReviewError(f"not a preference pair: {part!r}") from None


def _run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise ReviewError(f"no run with id {run_id}")
    return run


def shared_tasks(session: Session, run_x: int, run_y: int) -> list[int]:
    """Tasks both runs answered (have a trajectory for), by id."""
    if run_x == run_y:
        raise ReviewError("a preference compares two different runs")
    _run(session, run_x), _run(session, run_y)
    tasks: list[set[int]] = [
        set(session.exec(select(Trajectory.task_id).where(Trajectory.run_id == r)).all()) for r in (run_x, run_y)
    ]
    both = sorted(tasks[0] & tasks[1])
    if not both:
        raise ReviewError(f"runs {run_x} and {run_y} share no task")
    return both


def assign_pairs(
    session: Session, run_x: int, run_y: int, annotators: list[str], overlap: int, *, tasks: list[int] | None = None
) -> tuple[list[int], list[Assignment]]:
    """Items for every task both runs answered (or the given ones), ``overlap`` people each.
    Returns the tasks and the new assignments; re-running adds nothing."""
    people = assign_people(session, annotators, overlap)
    shared = shared_tasks(session, run_x, run_y)
    if tasks is not None:
        missing = sorted(set(tasks) - set(shared))
        if missing:
            raise ReviewError(f"task(s) {', '.join(map(str, missing))} not answered by both runs")
        shared = [t for t in shared if t in set(tasks)]
    part = preference_pair_part(run_x, run_y)
    targets = [Target("task", t, part) for t in shared]
    return shared, distribute(session, PREFERENCE_SCALE, targets, people, overlap, blind=True)


def shown_left(annotator_id: int, task_id: int, run_a: int, run_b: int) -> int:
    """Which run this person sees as "A" on this item: a coin drawn from the item, fixed for ever."""
    digest = hashlib.sha256(f"{annotator_id}|{task_id}|{run_a}|{run_b}".encode()).digest()
    return run_a if digest[0] & 1 else run_b


@dataclass(frozen=True)
class PairItem:
    """One item of a person's queue. Run ids are for the code; screens never show them."""

    assignment_id: int
    task_id: int
    run_a: int
    run_b: int
    left: int
    status: str

    @property
    def right(self) -> int:
        return self.run_b if self.left == self.run_a else self.run_a

    def to_dict(self) -> dict[str, Any]:
        """What a blind listing may show: the item and task, not the runs."""
        return {"item": self.assignment_id, "task_id": self.task_id, "status": self.status}


def _item(a: Assignment) -> PairItem:
    run_a, run_b = parse_pair_part(a.target_part)
    return PairItem(
        a.id or 0, a.target_id, run_a, run_b, shown_left(a.annotator_id, a.target_id, run_a, run_b), a.status
    )


def queue(session: Session, annotator: str, *, status: str | None = None) -> list[PairItem]:
    """A person's preference items in the order they were handed out."""
    person = get_annotator(session, annotator)
    stmt = select(Assignment).where(Assignment.annotator_id == person.id, Assignment.scale == PREFERENCE_SCALE)
    if status is not None:
        stmt = stmt.where(Assignment.status == status)
    return [_item(a) for a in session.exec(stmt.order_by(Assignment.id)).all()]  # type: ignore[arg-type]


def progress(session: Session) -> list[tuple[str, int, int]]:
    """(annotator, done, assigned) for everyone with preference items."""
    rows = session.exec(
        select(Annotator.name, Assignment.status)
        .join(Annotator, col(Annotator.id) == col(Assignment.annotator_id))
        .where(Assignment.scale == PREFERENCE_SCALE)
    ).all()
    out: dict[str, list[int]] = {}
    for name, status in rows:
        counts = out.setdefault(name, [0, 0])
        counts[0] += status == "done"
        counts[1] += 1
    return [(name, d, n) for name, (d, n) in sorted(out.items())]


def get_item(session: Session, annotator: str, item_id: int) -> tuple[Annotator, Assignment]:
    person = get_annotator(session, annotator)
    a = session.get(Assignment, item_id)
    if a is None or a.scale != PREFERENCE_SCALE:
        raise ReviewError(f"no preference item {item_id}")
    if a.annotator_id != person.id:
        raise ReviewError(f"preference item {item_id} is not {person.name}'s")
    return person, a


def _stored(session: Session, annotator_id: int, task_id: int, run_a: int, run_b: int) -> Preference | None:
    return session.exec(
        select(Preference).where(
            Preference.annotator_id == annotator_id,
            Preference.task_id == task_id,
            Preference.run_a_id == run_a,
            Preference.run_b_id == run_b,
        )
    ).first()


def record(session: Session, annotator: str, item_id: int, shown_choice: str, reason: str | None = None) -> Preference:
    """Store a judgement given as the person saw it (``a`` = the answer shown as A); judging an item
    again replaces the choice (and reason) and counts a revision. Closes the item."""
    choice = (shown_choice or "").strip().lower()
    if choice not in SHOWN_CHOICES:
        raise ReviewError(f"choice must be one of {', '.join(SHOWN_CHOICES)}; got {shown_choice!r}")
    person, a = get_item(session, annotator, item_id)
    item = _item(a)
    canonical = (
        "tie" if choice == "tie" else ("a" if (item.left if choice == "a" else item.right) == item.run_a else "b")
    )
    task = session.get(Task, item.task_id)
    row = _stored(session, person.id or 0, item.task_id, item.run_a, item.run_b)
    if row is None:
        row = Preference(
            annotator_id=person.id or 0,
            task_id=item.task_id,
            run_a_id=item.run_a,
            run_b_id=item.run_b,
            shown_left_run_id=item.left,
            choice=canonical,
            reason=(reason or "").strip() or None,
            task_revision=task.revision if task else None,
            created_at=utcnow(),
            updated_at=utcnow(),
        )
        session.add(row)
    else:
        row.choice, row.reason, row.shown_left_run_id = canonical, (reason or "").strip() or None, item.left
        row.task_revision = task.revision if task else None
        row.revision += 1
        row.updated_at = utcnow()
    a.status = "done"
    session.flush()
    return row


def withdraw(session: Session, annotator: str, item_id: int) -> None:
    """Take back one's judgement of an item (audited) and reopen it."""
    person, a = get_item(session, annotator, item_id)
    item = _item(a)
    row = _stored(session, person.id or 0, item.task_id, item.run_a, item.run_b)
    if row is not None:
        session.delete(row)
    a.status = "open"
    session.flush()


# ------------------------------------------------------------------------------------------------
# What a person sees
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    label: str  # "A" or "B"
    status: str
    final_answer: str | None
    events: list[dict[str, Any]] = field(default_factory=list)  # ordinal, kind, payload, failed


@dataclass(frozen=True)
class PairView:
    item: PairItem
    task: dict[str, Any]
    guidelines: str
    sides: tuple[Side, Side]
    image_asset_ids: list[int]
    own_choice: str | None  # as shown: a | b | tie
    own_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item.assignment_id,
            "status": self.item.status,
            "task": self.task,
            "answers": {
                s.label: {"status": s.status, "final_answer": s.final_answer, "events": s.events} for s in self.sides
            },
            "images": self.image_asset_ids,
            "choice": self.own_choice,
            "reason": self.own_reason,
        }


def _names(session: Session, run: Run) -> list[str]:
    names = [run.name or ""]
    if run.endpoint_id is not None:
        ep = session.get(ModelEndpoint, run.endpoint_id)
        if ep is not None:
            names += [ep.name, ep.model]
    return sorted({n for n in names if len(n.strip()) >= 3}, key=len, reverse=True)


def _mask(value: Any, names: list[str]) -> Any:
    if isinstance(value, str):
        for n in names:
            value = value.replace(n, MASK)
        return value
    if isinstance(value, list):
        return [_mask(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _mask(v, names) for k, v in value.items()}
    return value


def _side(session: Session, label: str, run_id: int, task_id: int, names: list[str]) -> Side:
    traj = session.exec(select(Trajectory).where(Trajectory.run_id == run_id, Trajectory.task_id == task_id)).first()
    if traj is None:
        return Side(label, "missing", None)
    events = session.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(Event.ordinal)).all()  # type: ignore[arg-type]
    return Side(
        label,
        traj.status,
        _mask(traj.final_answer, names),
        [
            {"ordinal": e.ordinal, "kind": e.kind, "payload": _mask(e.payload, names), "failed": e.failed}
            for e in events
        ],
    )


def pair_view(session: Session, annotator: str, item_id: int) -> PairView:
    """The item as the person sees it: the task, answers labelled A and B in their order, no names."""
    person, a = get_item(session, annotator, item_id)
    item = _item(a)
    task = session.get(Task, item.task_id)
    if task is None:
        raise ReviewError(f"task {item.task_id} is gone")
    bench = session.get(Benchmark, task.benchmark_id)
    names = sorted(
        set(_names(session, _run(session, item.run_a)) + _names(session, _run(session, item.run_b))),
        key=len,
        reverse=True,
    )
    sides = (_side(session, "A", item.left, task.id or 0, names), _side(session, "B", item.right, task.id or 0, names))
    images = list(
        session.exec(
            select(TaskAsset.asset_id)
            .where(TaskAsset.task_id == task.id, TaskAsset.role == "query_image")
            .order_by(TaskAsset.ordinal, TaskAsset.id)  # type: ignore[arg-type]
        ).all()
    )
    own, reason = _shown_judgement(session, person, item)
    return PairView(
        item,
        {"id": task.id, "query": _mask(task.query, names), "category": task.category, "revision": task.revision},
        (bench.guidelines or "") if bench else "",
        sides,
        images,
        own,
        reason,
    )


def _shown_judgement(session: Session, person: Annotator, item: PairItem) -> tuple[str | None, str | None]:
    row = _stored(session, person.id or 0, item.task_id, item.run_a, item.run_b)
    if row is None:
        return None, None
    if row.choice == "tie":
        return "tie", row.reason
    winner = row.run_a_id if row.choice == "a" else row.run_b_id
    return ("a" if winner == item.left else "b"), row.reason


def shown_judgement(session: Session, annotator: str, item_id: int) -> tuple[str | None, str | None]:
    """The person's current judgement of an item as they saw it (a / b / tie, reason), or (None, None)."""
    person, a = get_item(session, annotator, item_id)
    return _shown_judgement(session, person, _item(a))


__all__ = [
    "PairItem",
    "PairView",
    "Side",
    "assign_pairs",
    "parse_pair_part",
    "pair_view",
    "progress",
    "queue",
    "record",
    "shared_tasks",
    "shown_judgement",
    "shown_left",
    "withdraw",
]
