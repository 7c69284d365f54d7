"""Undo that survives a restart: each edit says, by name, how to take itself back.

An ``Edit`` is a label plus an operation name and JSON arguments (never a closure), so the undo stack
of a task can be stored (``UndoEntry`` rows, per person and scope) and replayed after the TUI is
closed and opened again. ``OPS`` maps each name to the function that performs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sqlmodel import Session, select

STACK_LIMIT = 50  # per person and scope; older entries are dropped

OPS: dict[str, Callable[..., Any]] = {}


def op(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        OPS[name] = fn
        return fn

    return register


@dataclass
class Edit:
    """What a write did, for the undo stack: a label and how to take it back (an operation in ``OPS``)."""

    label: str
    op: str
    args: dict[str, Any] = field(default_factory=dict)
    entry_id: int | None = None  # its stored UndoEntry, once recorded
    # The row this edit made and its undo takes away (``made_row``): checked by more than its id before
    # anything is undone, so an undo never takes away a row someone else made under a reused id.
    made: dict[str, Any] | None = None
    # Taken over by a later save of the same typing (``TypingSpan``): off the stack for good. A flag on the
    # object, not a set of entry ids: SQLite reuses the id of a deleted last row for the next entry.
    dropped: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise KeyError(f"no undo operation {self.op!r}")

    def undo(self, session: Session) -> Any:
        """Take the edit back, and drop its stored entry in the same transaction. Refused (``UndoRefused``)
        when the row it made is gone or is another row: then only the entry goes, committed before the
        refusal, since it can never be undone and would otherwise stand in the way after every restart."""
        if self.made is not None:
            try:
                check_made(session, self.made, self.label)
            except UndoRefused:
                self._drop_entry(session)
                session.commit()
                raise
        out = OPS[self.op](session, **self.args)
        self._drop_entry(session)
        return out

    def _drop_entry(self, session: Session) -> None:
        from store.models import UndoEntry

        row = session.get(UndoEntry, self.entry_id) if self.entry_id is not None else None
        if row is not None:
            session.delete(row)


def record(session: Session, scope: str, edit: Edit) -> None:
    """Store ``edit`` on ``scope``'s stack of the session's actor (inside the edit's own transaction)."""
    from store.models import UndoEntry

    actor = str(session.info.get("actor") or "")
    args = {**edit.args, MADE: edit.made} if edit.made is not None else edit.args
    row = UndoEntry(actor=actor, scope=scope, label=edit.label[:200], op=edit.op, args=args)
    session.add(row)
    session.flush()
    edit.entry_id = row.id
    old = session.exec(
        select(UndoEntry.id)
        .where(UndoEntry.actor == actor, UndoEntry.scope == scope)
        .order_by(UndoEntry.id.desc())  # type: ignore[union-attr]
        .offset(STACK_LIMIT)
    ).all()
    for entry_id in old:
        stale = session.get(UndoEntry, entry_id)
        if stale is not None:
            session.delete(stale)


def stored_stack(session: Session, scope: str) -> list[Edit]:
    """The actor's stored stack for ``scope``, oldest first (what ctrl+z takes back after a restart)."""
    from store.models import UndoEntry

    actor = str(session.info.get("actor") or "")
    rows = session.exec(
        select(UndoEntry).where(UndoEntry.actor == actor, UndoEntry.scope == scope).order_by(UndoEntry.id)  # type: ignore[arg-type]
    ).all()
    return [_stored_edit(r.label, r.op, dict(r.args or {}), r.id) for r in rows if r.op in OPS]


def _stored_edit(label: str, op: str, args: dict[str, Any], entry_id: int | None) -> Edit:
    made = args.pop(MADE, None)
    return Edit(label, op, args, entry_id, made=made if isinstance(made, dict) else None)


# ------------------------------------------------------------------ the row an edit made

MADE = "_made"
"""The key of ``Edit.made`` among a stored entry's arguments (never an operation's argument name)."""

# Per table, the columns a row is born with and keeps: with the id they say "this very row".
_IDENTITY_COLUMNS: dict[str, tuple[str, ...]] = {
    "adjudication": ("reviewer_id", "target_kind", "target_id", "target_part", "scale", "created_at"),
    "humanrating": ("annotator_id", "target_kind", "target_id", "target_part", "scale", "created_at"),
    "task": ("benchmark_id", "source_id", "created_at"),
    "referencestep": ("task_id", "recorded_at"),
    "checkpoint": ("task_id",),
    "orderingconstraint": ("task_id",),
    "taskasset": ("task_id", "asset_id", "role"),
}


class UndoRefused(Exception):
    """The row an undo would take away is not the one its edit made: nothing is undone."""


def _model_of(table: str) -> type:
    from store.models import ALL_TABLES

    return next(m for m in ALL_TABLES if m.__tablename__ == table)  # type: ignore[attr-defined]


def _identity(row: Any, table: str) -> dict[str, Any]:
    return {column: _comparable(getattr(row, column)) for column in _IDENTITY_COLUMNS[table]}


def _comparable(value: Any) -> Any:
    """A column value as JSON that reads the same however it was loaded: a timestamp as naive UTC (a row
    just made holds an aware one; SQLite gives it back naive)."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value.isoformat()
    return value


def made_row(session: Session, model: type, row_id: int | None) -> dict[str, Any]:
    """What ``Edit.made`` keeps of a row just made in this session: its table, id and identity."""
    table = str(model.__tablename__)  # type: ignore[attr-defined]
    row = session.get(model, row_id) if row_id is not None else None
    assert row is not None, f"{table} {row_id} was just made"
    return {"table": table, "id": row_id, "identity": _identity(row, table)}


def check_made(session: Session, made: dict[str, Any], label: str) -> None:
    """Refuse, in words, to undo ``label`` unless the row it would take away is the one it made."""
    table, row_id = str(made.get("table")), made.get("id")
    row = session.get(_model_of(table), row_id) if table in _IDENTITY_COLUMNS else None
    if row is None:
        raise UndoRefused(f"not undone: {label}: {table} #{row_id} is gone already (the audit trail says who took it)")
    now = _identity(row, table)
    if now != made.get("identity"):
        changed = ", ".join(
            f"{k} {made.get('identity', {}).get(k)!r} → {v!r}"
            for k, v in now.items()
            if made.get("identity", {}).get(k) != v
        )
        raise UndoRefused(
            f"not undone: {label}: {table} #{row_id} is no longer the row this edit made ({changed}); "
            "nothing was changed"
        )


# ------------------------------------------------------------------ the operations


def _delete(session: Session, model: type, row_id: int) -> None:
    row = session.get(model, row_id)
    if row is not None:
        session.delete(row)


@op("edit_task")
def _edit_task(session: Session, task_id: int, fields: dict[str, Any], after: dict[str, Any] | None = None) -> Any:
    """Put ``fields`` back. With ``after`` (what the edit stored), a field someone changed since is left as
    they made it and nothing is undone: an undo must not silently drop another person's later edit."""
    from annotation import tasks as authoring

    if after is None:  # entries stored before ``after`` was recorded
        return authoring.edit_task(session, task_id, **fields)
    try:
        return authoring.edit_unless_changed(session, task_id, fields, base=after)
    except authoring.FieldConflict as conflict:
        raise authoring.AuthoringError(
            f"not undone: {conflict.field} was changed by {conflict.who} after your edit; "
            "edit it by hand if it should still change"
        ) from conflict


@op("delete_task")
def _delete_task(session: Session, task_id: int) -> None:
    """Take back a task's creation while nothing has been built on it. Once it has steps, images,
    checkpoints, a later revision or another status, the undo is refused in words (it failed with
    SQLAlchemy's "Query-invoked autoflush" advice, and would otherwise take all that work with it)."""
    from annotation.tasks import AuthoringError
    from store.models import Checkpoint, OrderingConstraint, ReferenceStep, Task, TaskAsset

    task = session.get(Task, task_id)
    if task is None:
        return
    built_on = task.revision > 1 or task.status != "draft"
    for model in (ReferenceStep, TaskAsset, Checkpoint, OrderingConstraint):
        row = session.exec(select(model.id).where(model.task_id == task_id).limit(1)).first()
        built_on = built_on or row is not None
    if built_on:
        raise AuthoringError(
            f"not undone: task {task_id} has been worked on since it was created (revision {task.revision}, "
            f"{task.status}); reject it if it should go"
        )
    session.delete(task)


@op("detach_asset")
def _detach_asset(session: Session, link_id: int) -> None:
    from store.models import TaskAsset

    _delete(session, TaskAsset, link_id)


@op("guidelines")
def _guidelines(session: Session, benchmark: str, text: str) -> None:
    from annotation.tasks import ensure_benchmark, get_benchmark

    ensure_benchmark(session, benchmark, get_benchmark(session, benchmark).source_format, guidelines=text)


@op("remove_step")
def _remove_step(session: Session, step_id: int, link_ids: list[int] | None = None) -> None:
    """Take back an added step: its image links, then the step."""
    from annotation import tasks as authoring
    from store.models import TaskAsset

    for link_id in link_ids or []:
        _delete(session, TaskAsset, link_id)
    session.flush()
    authoring.delete_step(session, step_id)


@op("edit_step")
def _edit_step(session: Session, step_id: int, fields: dict[str, Any]) -> Any:
    from annotation import tasks as authoring

    return authoring.edit_step(session, step_id, **fields)


@op("restore_step")
def _restore_step(session: Session, snapshot: dict[str, Any]) -> Any:
    from annotation import tasks as authoring

    return authoring.restore_step(session, snapshot)


@op("move_step")
def _move_step(session: Session, step_id: int, ordinal: int) -> Any:
    from annotation import tasks as authoring

    return authoring.move_step(session, step_id, ordinal)


@op("delete_checkpoint_row")
def _delete_checkpoint_row(session: Session, checkpoint_id: int) -> None:
    from store.models import Checkpoint

    _delete(session, Checkpoint, checkpoint_id)


@op("edit_checkpoint")
def _edit_checkpoint(session: Session, checkpoint_id: int, fields: dict[str, Any]) -> Any:
    from annotation import tasks as authoring

    return authoring.edit_checkpoint(session, checkpoint_id, **fields)


@op("add_checkpoint")
def _add_checkpoint(session: Session, task_id: int, key: str, fields: dict[str, Any]) -> Any:
    from annotation import tasks as authoring

    return authoring.add_checkpoint(session, task_id, key, **fields)


@op("add_ordering")
def _add_ordering(session: Session, task_id: int, sequence: list[str], max_gap: int | None, key: str) -> Any:
    from annotation import tasks as authoring

    return authoring.add_ordering_constraint(session, task_id, sequence, max_gap, key=key)


@op("delete_ordering_row")
def _delete_ordering_row(session: Session, ordering_id: int) -> None:
    from store.models import OrderingConstraint

    _delete(session, OrderingConstraint, ordering_id)


@op("undo_rating")
def _undo_rating(session: Session, rating_id: int) -> None:
    from tui.screens.review.data import undo_rating

    undo_rating(session, rating_id)


@op("restore_preference")
def _restore_preference(session: Session, annotator: str, item_id: int, choice: str | None, reason: str | None) -> None:
    """Put a preference item back as it was: judged ``choice`` (as shown; sides never swap) or open."""
    from annotation.review import preferences

    if choice is None:
        preferences.withdraw(session, annotator, item_id)
    else:
        preferences.record(session, annotator, item_id, choice, reason)


@op("withdraw_adjudication")
def _withdraw_adjudication(session: Session, reviewer: str, adjudication_id: int) -> None:
    from annotation.review.adjudication import withdraw_adjudication

    withdraw_adjudication(session, reviewer, adjudication_id)


# ------------------------------------------------------------------ a field's typing and the stack


@dataclass
class TakenOver:
    """What a save of a typing span returns: the entries it replaced (``ChainmarkApp.drop_undo``)."""

    edits: list[Edit]


@dataclass
class TypingSpan:
    """One text field's typing since its text was last loaded, as the store's undo stack sees it.

    The field undoes its own typing first (``LayeredTextArea``), back to ``start``; so the stack keeps at
    most one entry for the span, and that entry takes the field back to ``start`` too: each save of the
    field replaces the span's earlier entry, and a save that brings the field back to ``start`` (its own
    undo, or typing it back) leaves none. The two layers never fight: no stored entry can put back text
    the field's own undo took away, and once the field has nothing left to undo, ctrl+z reaches the edit
    saved before the typing. Entries are touched only inside save transactions (serialised by the app).
    """

    start: Any
    entries: list[Edit] = field(default_factory=list)

    def take_over(self, session: Session, value: Any, instead: Callable[[], Edit]) -> Any:
        """In the transaction that stored ``value``: delete the span's earlier entries and return what
        ``WorkScreen.save`` records in their place (``(TakenOver, Edit)``, or ``TakenOver`` alone at ``start``)."""
        from store.models import UndoEntry

        taken = TakenOver(list(self.entries))
        for edit in taken.edits:
            row = session.get(UndoEntry, edit.entry_id) if edit.entry_id is not None else None
            if row is not None:
                session.delete(row)
        self.entries.clear()
        if value == self.start:
            return taken
        edit = instead()
        self.entries.append(edit)
        return taken, edit
