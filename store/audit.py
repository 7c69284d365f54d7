"""Automatic audit trail: every create/update/delete of an authored row writes an AuditEvent.

Hooked on the session's ``before_flush`` so that no code path (CLI, TUI, importer) can edit a task,
step, checkpoint or rating without leaving who/what/before/after behind. The actor comes from
``session.info["actor"]`` (set by ``store.db.session_scope``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import event, inspect
from sqlmodel import Session

from store.changes import note_change

# Set by ``install``, which store.models calls once its classes exist: the audit trail knows the
# tables it watches without importing the models (which import this module to install it).
AUDITED: tuple[type, ...] = ()
AuditEvent: Any = None


def install(audited: tuple[type, ...], event_model: type) -> None:
    """Record edits of ``audited`` rows as ``event_model`` rows from now on."""
    global AUDITED, AuditEvent
    AUDITED, AuditEvent = audited, event_model


# Noise that changes on every edit and says nothing about what was edited.
_IGNORED_FIELDS = {"updated_at"}


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


def row_dict(obj: Any, *, old: bool = False) -> dict[str, Any]:
    """Column values of a mapped object; with ``old`` the values before the pending change."""
    state = inspect(obj)
    out: dict[str, Any] = {}
    for attr in state.mapper.column_attrs:
        key = attr.key
        if old:
            hist = state.attrs[key].history
            value = hist.deleted[0] if hist.deleted else getattr(obj, key)
        else:
            value = getattr(obj, key)
        out[key] = _jsonable(value)
    return out


def entity_name(obj: Any) -> str:
    return type(obj).__tablename__  # type: ignore[no-any-return]


@event.listens_for(Session, "before_flush")
def _audit_before_flush(session: Session, _ctx: Any, _instances: Any) -> None:
    actor = session.info.get("actor", "system")
    pending: list[tuple[str, Any, dict | None]] = []
    for obj in list(session.new):
        if isinstance(obj, AUDITED):
            pending.append(("create", obj, None))
    for obj in list(session.dirty):
        if isinstance(obj, AUDITED) and session.is_modified(obj, include_collections=False):
            before = row_dict(obj, old=True)
            after = row_dict(obj)
            changed = {k for k in after if before.get(k) != after.get(k)} - _IGNORED_FIELDS
            if changed:
                note_change(session, obj)
                session.add(
                    AuditEvent(
                        actor=actor,
                        action="update",
                        entity=entity_name(obj),
                        entity_id=obj.id,
                        before=before,
                        after=after,
                    )
                )
    for obj in list(session.deleted):
        if isinstance(obj, AUDITED):
            note_change(session, obj)
            session.add(
                AuditEvent(
                    actor=actor,
                    action="delete",
                    entity=entity_name(obj),
                    entity_id=obj.id,
                    before=row_dict(obj),
                    after=None,
                )
            )
    if pending:
        session.info.setdefault("_audit_new", []).extend(o for _, o, _ in pending)


@event.listens_for(Session, "after_flush")
def _audit_after_flush(session: Session, _ctx: Any) -> None:
    # New rows get their ids only during the flush, so their "create" events are written after it.
    created = session.info.pop("_audit_new", [])
    actor = session.info.get("actor", "system")
    for obj in created:
        note_change(session, obj)
        session.add(
            AuditEvent(
                actor=actor,
                action="create",
                entity=entity_name(obj),
                entity_id=obj.id,
                before=None,
                after=row_dict(obj),
            )
        )
