"""Events of a trajectory, kept in memory while it runs and written in one transaction when it ends
(so a killed run never leaves half a trajectory behind: resume deletes and redoes unfinished ones).

The database functions here are SQLAlchemy Core over ``store.core_tables`` and take a connection (a
run's database thread) or an ORM session (the TUI, tests) alike: a run never builds the SQLModel
classes for them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeAlias

import sqlalchemy as sa

from store import events as ev
from store import plain_rows
from store import core_tables as t
from store.clock import utcnow
from store.core_tables import connection_of
from store.dialects import conflict_insert, name_of
from store.storable import storable

Reader: TypeAlias = Any  # a Connection, or an ORM Session: both execute Core statements

FINISHED = ("done", "failed")


@dataclass
class PendingEvent:
    kind: str
    payload: dict[str, Any]
    failed: bool = False
    started_at: datetime = field(default_factory=utcnow)
    finished_at: datetime | None = None
    assets: list[tuple[int, str]] = field(default_factory=list)  # (asset_id, role)


class Recorder:
    """Append-only list of events; ``listener`` sees each one as it happens (live monitors)."""

    def __init__(self, listener: Any = None):
        self.events: list[PendingEvent] = []
        self.listener = listener

    def add(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        failed: bool = False,
        started_at: datetime | None = None,
        assets: list[tuple[int, str]] | None = None,
    ) -> PendingEvent:
        assert kind in ev.KINDS, kind
        event = PendingEvent(kind, payload, failed, started_at or utcnow(), utcnow(), list(assets or []))
        self.events.append(event)
        if self.listener is not None:
            self.listener(event)
        return event

    def error(self, type_: str, message: str, **extra: Any) -> PendingEvent:
        return self.add(ev.ERROR, {"type": type_, "message": message, **extra}, failed=True)


@dataclass
class CacheEntry:
    key: str
    kind: str
    request: Any
    response: Any


def _delete_events(session: Reader, trajectory_ids: list[int]) -> int:
    if not trajectory_ids:
        return 0
    event_ids = sa.select(t.event.c.id).where(t.event.c.trajectory_id.in_(trajectory_ids))
    session.execute(sa.delete(t.eventasset).where(t.eventasset.c.event_id.in_(event_ids)))
    result = session.execute(sa.delete(t.event).where(t.event.c.trajectory_id.in_(trajectory_ids)))
    return result.rowcount or 0


def ensure_trajectories(session: Reader, run_id: int, task_ids: list[int]) -> dict[int, int]:
    """A ``pending`` trajectory row per task (existing rows kept), created in one go so starting a
    trajectory later costs no write. Returns task id → trajectory id."""
    existing = dict(session.execute(sa.select(_T.c.task_id, _T.c.id).where(_T.c.run_id == run_id)).all())
    missing = [t for t in task_ids if t not in existing]
    if missing:  # multi-row INSERTs that return the new ids; no ORM objects, no JSON encoding per row
        created = session.execute(_NEW_TRAJECTORIES, [{"run_id": run_id, "task_id": t} for t in missing])
        existing.update(created.all())
    return {t: existing[t] for t in task_ids}  # type: ignore[misc]


_T = _TRAJECTORY = t.trajectory
_NEW_TRAJECTORIES = (
    sa.insert(_TRAJECTORY)
    .values(task_revision=1, status="pending", usage=sa.literal_column("'{}'"))
    .returning(_TRAJECTORY.c.task_id, _TRAJECTORY.c.id)
)


def reset_unfinished(session: Reader, run_id: int) -> list[int]:
    """Unfinished trajectories of a run go back to ``pending`` with their partial events deleted, in
    the caller's transaction. Returns their task ids."""
    rows = session.execute(
        sa.select(_T.c.id, _T.c.task_id).where(_T.c.run_id == run_id, _T.c.status.not_in(FINISHED))
    ).all()
    if rows:
        _delete_events(session, [r.id for r in rows])
        session.execute(
            sa.update(_T)
            .where(_T.c.run_id == run_id, _T.c.status.not_in(FINISHED))
            .values(status="pending", final_answer=None, error=None, usage={}, started_at=None, finished_at=None)
        )
    return [r.task_id for r in rows]


def finished_task_ids(session: Reader, run_id: int, statuses: tuple[str, ...] = FINISHED) -> set[int]:
    return set(
        session.execute(sa.select(_T.c.task_id).where(_T.c.run_id == run_id, _T.c.status.in_(statuses))).scalars()
    )


@dataclass
class FinishedTrajectory:
    """Everything a trajectory's commit writes."""

    trajectory_id: int
    recorder: Recorder
    status: str
    final_answer: str | None
    usage: dict[str, Any]
    error: str | None
    cache: list[CacheEntry]
    task_revision: int
    started_at: datetime
    failure_kind: str | None = None  # a failed model call's kind ("connection", "timeout", "http", …)


def commit_many(session: Reader, items: list[FinishedTrajectory]) -> None:
    """Group commit: several finished trajectories in one transaction (each still all-or-nothing).

    Written with a few executemany statements rather than ORM objects: the single database thread
    shares the GIL with the event loop, so every millisecond of Python spent here delays the model
    calls in flight (bench_harness)."""
    if not items:
        return
    ids = [item.trajectory_id for item in items]
    statuses = dict(session.execute(sa.select(_T.c.id, _T.c.status).where(_T.c.id.in_(ids))).all())
    vanished = [i for i in ids if i not in statuses]
    if vanished:
        raise LookupError(f"trajectory {vanished[0]} vanished")
    _delete_events(session, [i for i in ids if statuses[i] in FINISHED])  # re-running replaces a finished one
    conn = connection_of(session)
    plain = _plain(conn)
    _insert_events(session, items, plain)
    now = utcnow()
    finished = [
        {
            "tid": item.trajectory_id,
            "status": item.status,
            "final_answer": item.final_answer,
            "usage": item.usage,
            "error": item.error,
            "finished_at": now,
            "task_revision": item.task_revision,
            "started_at": item.started_at,
        }
        for item in items
    ]
    if plain:
        for row in finished:
            row["id"] = row.pop("tid")
        plain_rows.update_by_id(conn, _TRAJECTORY, _FINISHED_COLUMNS, finished, keep_if_null=_KEPT_IF_NULL)
    else:
        session.execute(_FINISH_TRAJECTORY, finished)
    store_cache(session, [entry for item in items for entry in item.cache])


def _plain(conn: Any) -> bool:
    """Whether the commit's rows go through ``store.plain_rows`` (SQLite) rather than Core statements."""
    return plain_rows.applies(conn)


_FINISH_TRAJECTORY = (
    sa.update(_T)
    .where(_T.c.id == sa.bindparam("tid"))
    .values(
        status=sa.bindparam("status"),
        final_answer=sa.bindparam("final_answer"),
        usage=sa.bindparam("usage", type_=sa.JSON),
        error=sa.bindparam("error"),
        finished_at=sa.bindparam("finished_at"),
        task_revision=sa.func.coalesce(
            sa.bindparam("task_revision", type_=sa.Integer),
            _T.c.task_revision,
        ),
        started_at=sa.func.coalesce(
            sa.bindparam("started_at", type_=sa.DateTime(timezone=True)),
            _T.c.started_at,
        ),
    )
)


_FINISHED_COLUMNS = ("status", "final_answer", "usage", "error", "finished_at", "task_revision", "started_at")
_KEPT_IF_NULL = ("task_revision", "started_at")  # as _FINISH_TRAJECTORY's coalesce
_EVENT_COLUMNS = ("trajectory_id", "ordinal", "kind", "payload", "failed", "started_at", "finished_at")
_LINK_COLUMNS = ("event_id", "asset_id", "ordinal", "role")


def _insert_events(session: Reader, items: list[FinishedTrajectory], plain: bool = False) -> None:
    """All events of the batch in one executemany, then their asset links (ids looked up by the
    (trajectory, ordinal) key, which is unique). ``plain``: as ``store.plain_rows`` statements (SQLite)."""
    rows = [
        {
            "trajectory_id": item.trajectory_id,
            "ordinal": i,
            "kind": e.kind,
            "payload": e.payload,
            "failed": e.failed,
            "started_at": e.started_at,
            "finished_at": e.finished_at,
        }
        for item in items
        for i, e in enumerate(item.recorder.events)
    ]
    if not rows:
        return
    if plain:
        plain_rows.insert(connection_of(session), t.event, _EVENT_COLUMNS, rows)
    else:
        session.execute(sa.insert(t.event), rows)
    with_assets = {
        item.trajectory_id: item.recorder.events for item in items if any(e.assets for e in item.recorder.events)
    }
    if not with_assets:
        return
    event_ids = {
        (t, o): i
        for i, t, o in session.execute(
            sa.select(t.event.c.id, t.event.c.trajectory_id, t.event.c.ordinal).where(
                t.event.c.trajectory_id.in_(list(with_assets))
            )
        ).all()
    }
    links = [
        {"event_id": event_ids[(tid, i)], "asset_id": aid, "ordinal": j, "role": role}
        for tid, events in with_assets.items()
        for i, e in enumerate(events)
        for j, (aid, role) in enumerate(e.assets)
    ]
    if plain:
        plain_rows.insert(connection_of(session), t.eventasset, _LINK_COLUMNS, links)
    else:
        session.execute(sa.insert(t.eventasset), links)


def store_cache(session: Reader, entries: list[CacheEntry]) -> None:
    """Upsert by key: the newest response for a request wins, so replaying the latest run is exact."""
    if not entries:
        return
    now = utcnow()
    values = {
        e.key: {"key": e.key, "kind": e.kind, "request": e.request, "response": e.response, "created_at": now}
        for e in entries
    }  # the newest entry per key within the batch
    upsert = _cache_upsert(name_of(connection_of(session)))
    if upsert is not None:
        session.execute(upsert, list(values.values()))
        return
    c = t.replaycache.c
    for key, row in values.items():
        if session.execute(sa.select(c.id).where(c.key == key)).first() is None:
            session.execute(sa.insert(t.replaycache).values(**row))
        else:
            session.execute(sa.update(t.replaycache).where(c.key == key).values(**row))


_UPSERTS: dict[str, Any] = {}


def _cache_upsert(dialect: str) -> Any:
    """One INSERT … ON CONFLICT (key) DO UPDATE statement per dialect, built once and run as an
    executemany (its compiled form is then cached); None where the dialect has no such statement."""
    insert = conflict_insert(dialect)
    if insert is None:
        return None
    if dialect not in _UPSERTS:
        stmt = insert(t.replaycache)
        _UPSERTS[dialect] = stmt.on_conflict_do_update(
            index_elements=["key"],
            set_={
                "kind": stmt.excluded.kind,
                "request": stmt.excluded.request,
                "response": stmt.excluded.response,
                "created_at": stmt.excluded.created_at,
            },
        )
    return _UPSERTS[dialect]


def cache_lookup(session: Reader, key: str) -> dict[str, Any] | None:
    row = session.execute(sa.select(t.replaycache.c.response).where(t.replaycache.c.key == key)).scalar()
    return row if isinstance(row, dict) else None


def escaped_copy(item: FinishedTrajectory, *, nul: bool, why: str) -> FinishedTrajectory:
    """``item`` with every text and payload made storable (``store.storable``) and, when anything
    had to change, a note event saying what and why, so the stored trajectory owns up to it."""
    notes: set[str] = set()

    def fix(value: Any) -> Any:
        out, changed = storable(value, nul=nul)
        notes.update(changed)
        return out

    recorder = Recorder()
    recorder.events = [
        PendingEvent(e.kind, fix(e.payload), e.failed, e.started_at, e.finished_at, list(e.assets))
        for e in item.recorder.events
    ]
    cache = [CacheEntry(fix(c.key), c.kind, fix(c.request), fix(c.response)) for c in item.cache]
    copy = replace(
        item,
        recorder=recorder,
        final_answer=fix(item.final_answer),
        usage=fix(item.usage),
        error=fix(item.error),
        cache=cache,
    )
    if notes:
        recorder.events.append(
            PendingEvent(
                ev.ERROR,
                {
                    "type": "stored_escaped",
                    "notes": sorted(notes),
                    "store_error": fix(why),
                    "message": "part of this trajectory could not be stored as received and was stored escaped: "
                    + ", ".join(sorted(notes)),
                },
            )
        )
    return copy


def mark_unstorable(session: Reader, trajectory_id: int, reason: str) -> None:
    """Last resort when even the escaped trajectory cannot be written: the row says ``failed`` and
    why, with no events, instead of staying ``pending`` with no reason."""
    _delete_events(session, [trajectory_id])
    session.execute(
        sa.update(_TRAJECTORY)
        .where(_TRAJECTORY.c.id == trajectory_id)
        .values(status="failed", error=storable(reason)[0], finished_at=utcnow())
    )
