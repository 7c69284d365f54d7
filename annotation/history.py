"""Revert a task to an earlier point of its history: every audited change made after that point to the
task and to its steps, checkpoints, orderings and image links is taken back, newest first.

The audit trail (``store.audit``) keeps each row before and after each change, so going back needs no
snapshots: an update gets its ``before`` values back, a created row is removed, a deleted row is put
back with its old id. The revert is itself a set of audited changes (and a new revision), so it can be
looked at, and reverted, like any other edit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from store.models import AuditEvent, Checkpoint, OrderingConstraint, ReferenceStep, Task, TaskAsset

MODELS: dict[str, type] = {
    "task": Task,
    "referencestep": ReferenceStep,
    "checkpoint": Checkpoint,
    "orderingconstraint": OrderingConstraint,
    "taskasset": TaskAsset,
}
_SKIPPED = {"id", "revision", "updated_at", "edit_session"}


class RevertError(ValueError):
    """The task cannot be taken back to that point (the message says why)."""


def changes_after(session: Session, task_id: int, audit_id: int) -> list[AuditEvent]:
    """The task's own audit events and its parts' after ``audit_id``, newest first."""
    events = session.exec(
        select(AuditEvent)
        .where(
            AuditEvent.id > audit_id,  # type: ignore[operator]
            AuditEvent.entity.in_(list(MODELS)),  # type: ignore[attr-defined]
        )
        .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
    ).all()
    return [
        e
        for e in events
        if (e.entity == "task" and e.entity_id == task_id)
        or (e.entity != "task" and (e.after or e.before or {}).get("task_id") == task_id)
    ]


def _column_value(model: type, key: str, value: Any) -> Any:
    """A value from the audit's JSON, as the column wants it (timestamps were stored as ISO text)."""
    column = model.__table__.columns.get(key)  # type: ignore[attr-defined]
    if column is not None and isinstance(column.type, sa.DateTime) and isinstance(value, str):
        return datetime.fromisoformat(value)
    return value


def revert_task_to(session: Session, task_id: int, audit_id: int) -> int:
    """Take back every change after audit event ``audit_id``; returns how many were taken back."""
    from annotation.tasks import bump_revision, get_task, steps_of

    point = session.get(AuditEvent, audit_id)
    if point is None:
        raise RevertError(f"no history entry {audit_id}")
    later = changes_after(session, task_id, audit_id)
    if not later:
        return 0
    # Step positions are unique per task: park every step at a distinct negative position while the
    # history is replayed, and put the positions back in one last pass.
    position = {step.id: step.ordinal for step in steps_of(session, task_id)}
    for step in steps_of(session, task_id):
        step.ordinal = -(int(step.id or 0) + 1_000_000)
    session.flush()
    for event in later:
        model = MODELS[event.entity]
        row = session.get(model, event.entity_id) if event.entity_id is not None else None
        before = event.before or {}
        if event.action == "update" and row is not None:
            for key, value in before.items():
                if model is ReferenceStep and key == "ordinal":
                    position[row.id] = value
                elif key not in _SKIPPED and hasattr(row, key):
                    setattr(row, key, _column_value(model, key, value))
            session.add(row)
        elif event.action == "create" and row is not None:
            if model is Task:
                raise RevertError("that point is before the task existed; pick a later entry")
            position.pop(row.id, None)
            session.delete(row)
        elif event.action == "delete" and row is None and before:
            values = {k: _column_value(model, k, v) for k, v in before.items() if hasattr(model, k)}
            if model is ReferenceStep:
                position[values["id"]] = values["ordinal"]
                values["ordinal"] = -(int(values["id"]) + 1_000_000)
            session.add(model(**values))
        session.flush()
    for step in steps_of(session, task_id):
        step.ordinal = position.get(step.id, step.ordinal)
    session.flush()
    bump_revision(get_task(session, task_id), session)
    session.flush()
    return len(later)
