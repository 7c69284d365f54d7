"""Change notices: which authored records a committed transaction touched, for screens open elsewhere.

On PostgreSQL every transaction that changes an audited row (a task, its steps, checkpoints, images,
documents, a rating, an adjudication) sends one ``NOTIFY`` on ``CHANNEL``; the server delivers it only
when, and as soon as, the transaction commits, so a listener never hears of a change that was rolled
back. ``listen`` yields those notices to a TUI (or anything else) that wants to refresh what it shows
without polling. SQLite has no such channel: screens there compare a change stamp on a timer.

A notice is small JSON: ``{"by": actor, "c": [[entity, id, task_id], ...]}``. A transaction that
touches more rows than fit (a bulk edit) sends ``{"by": actor, "all": true}``: refresh everything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import Session

CHANNEL = "chainmark_changes"
_MAX_PAYLOAD = 7000  # PostgreSQL refuses a payload of 8000 bytes or more


@dataclass(frozen=True)
class Change:
    """One changed record: ``entity`` is its table, ``task_id`` the task it belongs to (if any)."""

    entity: str
    id: int | None
    task_id: int | None


@dataclass(frozen=True)
class Notice:
    """What one committed transaction changed, and who committed it. ``everything`` after a bulk change."""

    actor: str
    changes: tuple[Change, ...] = ()
    everything: bool = False

    def touches_task(self, task_id: int) -> bool:
        return self.everything or any(c.task_id == task_id for c in self.changes)


def note_change(session: Session, obj: Any) -> None:
    """Remember that ``obj`` changed in this transaction (called by the audit hook for every audited row)."""
    task_id = obj.id if type(obj).__tablename__ == "task" else getattr(obj, "task_id", None)
    session.info.setdefault("_changes", []).append(Change(type(obj).__tablename__, obj.id, task_id))


def encode(actor: str, changes: list[Change]) -> str:
    """The NOTIFY payload: every change once, or "all" when they do not fit."""
    unique = list(dict.fromkeys(changes))
    payload = json.dumps({"by": actor, "c": [[c.entity, c.id, c.task_id] for c in unique]}, separators=(",", ":"))
    if len(payload.encode()) > _MAX_PAYLOAD:
        payload = json.dumps({"by": actor[:200], "all": True}, separators=(",", ":"))
    return payload


def decode(payload: str) -> Notice | None:
    """A notice from a payload; None for anything that is not one of ours (another program may use the channel)."""
    try:
        data = json.loads(payload)
        if not isinstance(data, dict):
            return None
        actor = str(data.get("by") or "someone")
        if data.get("all") is True:
            return Notice(actor, everything=True)
        changes = tuple(Change(str(e), _int(i), _int(t)) for e, i, t in data.get("c", []))
    except (ValueError, TypeError):
        return None
    return Notice(actor, changes)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


@event.listens_for(Session, "before_commit")
def _notify_before_commit(session: Session) -> None:
    if session.get_bind().dialect.name != "postgresql":
        session.info.pop("_changes", None)
        return
    if session.new or session.dirty or session.deleted:
        session.flush()  # commit flushes after this hook: the rows it would write must be in the notice
    changes = session.info.pop("_changes", None)
    if not changes:
        return
    session.execute(
        text("SELECT pg_notify(:channel, :payload)"),
        {"channel": CHANNEL, "payload": encode(str(session.info.get("actor") or "someone"), changes)},
    )


@event.listens_for(Session, "after_rollback")
def _forget_after_rollback(session: Session) -> None:
    session.info.pop("_changes", None)


def supports_notices(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


class Flag(Protocol):
    def is_set(self) -> bool: ...


def listen(
    engine: Engine, stop: Flag, *, poll_seconds: float = 0.5, ready: Callable[[], None] | None = None
) -> Iterator[Notice]:
    """Notices as they are committed, until ``stop`` is set (checked every ``poll_seconds``).

    Uses a connection of its own in autocommit mode (LISTEN inside a transaction would only start
    hearing after that transaction ends). ``ready`` is called once the LISTEN is in place: anything
    committed after that is heard."""
    import psycopg

    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"LISTEN {CHANNEL}")
        if ready is not None:
            ready()
        while not stop.is_set():
            for note in conn.notifies(timeout=poll_seconds):
                notice = decode(note.payload)
                if notice is not None:
                    yield notice
                if stop.is_set():
                    return
