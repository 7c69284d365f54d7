"""Events of a trajectory, kept in memory while it runs and written in one transaction when it ends
(so a killed run never leaves half a trajectory behind: resume deletes and redoes unfinished ones)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from store import events as ev
from store import plain_rows
from store.models import Event, EventAsset, ReplayCache, Trajectory, utcnow
from store.storable import storable

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


def begin_trajectory(session: Session, run_id: int, task_id: int, revision: int) -> int:
    """The trajectory row for (run, task), created or reset to ``running`` with no events."""
    row = session.exec(select(Trajectory).where(Trajectory.run_id == run_id, Trajectory.task_id == task_id)).first()
    if row is None:
        row = Trajectory(run_id=run_id, task_id=task_id)
        session.add(row)
    else:
        _delete_events(session, [row.id or 0])
    row.task_revision, row.status, row.started_at = revision, "running", utcnow()
    row.final_answer, row.error, row.usage, row.finished_at = None, None, {}, None
    session.flush()
    return row.id or 0


def _delete_events(session: Session, trajectory_ids: list[int]) -> int:
    if not trajectory_ids:
        return 0
    event_ids = select(Event.id).where(Event.trajectory_id.in_(trajectory_ids))  # type: ignore[attr-defined]
    session.exec(sa.delete(EventAsset).where(EventAsset.event_id.in_(event_ids)))  # type: ignore[attr-defined, call-overload,union-attr]
    result = session.exec(sa.delete(Event).where(Event.trajectory_id.in_(trajectory_ids)))
    return result.rowcount or 0


def ensure_trajectories(session: Session, run_id: int, task_ids: list[int]) -> dict[int, int]:
    """A ``pending`` trajectory row per task (existing rows kept), created in one go so starting a
    trajectory later costs no write. Returns task id → trajectory id."""
    existing = dict(session.exec(select(Trajectory.task_id, Trajectory.id).where(Trajectory.run_id == run_id)).all())
    missing = [t for t in task_ids if t not in existing]
    if missing:  # multi-row INSERTs that return the new ids; no ORM objects, no JSON encoding per row
        created = session.execute(_NEW_TRAJECTORIES, [{"run_id": run_id, "task_id": t} for t in missing])
        existing.update(created.all())
    return {t: existing[t] for t in task_ids}  # type: ignore[misc]


_TRAJECTORY = Trajectory.__table__  # type: ignore[attr-defined]
_NEW_TRAJECTORIES = (
    sa.insert(_TRAJECTORY)
    .values(task_revision=1, status="pending", usage=sa.literal_column("'{}'"))
    .returning(_TRAJECTORY.c.task_id, _TRAJECTORY.c.id)
)


def reset_unfinished(session: Session, run_id: int) -> list[int]:
    """Unfinished trajectories of a run go back to ``pending`` with their partial events deleted, in
    the caller's transaction. Returns their task ids."""
    rows = session.exec(select(Trajectory).where(Trajectory.run_id == run_id, Trajectory.status.not_in(FINISHED))).all()  # type: ignore[attr-defined]
    _delete_events(session, [r.id or 0 for r in rows])
    for r in rows:
        r.status, r.final_answer, r.error, r.usage, r.started_at, r.finished_at = "pending", None, None, {}, None, None
    session.flush()
    return [r.task_id for r in rows]


def finished_task_ids(session: Session, run_id: int, statuses: tuple[str, ...] = FINISHED) -> set[int]:
    return set(
        session.exec(
            select(Trajectory.task_id).where(Trajectory.run_id == run_id, Trajectory.status.in_(statuses))  # type: ignore[attr-defined]
        ).all()
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


def commit_many(session: Session, items: list[FinishedTrajectory]) -> None:
    """Group commit: several finished trajectories in one transaction (each still all-or-nothing).

    Written with a few executemany statements rather than ORM objects: the single database thread
    shares the GIL with the event loop, so every millisecond of Python spent here delays the model
    calls in flight (bench_harness)."""
    if not items:
        return
    ids = [item.trajectory_id for item in items]
    statuses = dict(session.execute(sa.select(Trajectory.id, Trajectory.status).where(Trajectory.id.in_(ids))).all())  # type: ignore[union-attr]
    vanished = [i for i in ids if i not in statuses]
    if vanished:
        raise LookupError(f"trajectory {vanished[0]} vanished")
    _delete_events(session, [i for i in ids if statuses[i] in FINISHED])  # re-running replaces a finished one
    conn = session.connection()
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
    return bool(conn.dialect.name == "sqlite")


_FINISH_TRAJECTORY = (
    sa.update(Trajectory.__table__)  # type: ignore[attr-defined]
    .where(Trajectory.__table__.c.id == sa.bindparam("tid"))  # type: ignore[attr-defined]
    .values(
        status=sa.bindparam("status"),
        final_answer=sa.bindparam("final_answer"),
        usage=sa.bindparam("usage", type_=sa.JSON),
        error=sa.bindparam("error"),
        finished_at=sa.bindparam("finished_at"),
        task_revision=sa.func.coalesce(
            sa.bindparam("task_revision", type_=sa.Integer),
            Trajectory.__table__.c.task_revision,  # type: ignore[attr-defined]
        ),
        started_at=sa.func.coalesce(
            sa.bindparam("started_at", type_=sa.DateTime(timezone=True)),
            Trajectory.__table__.c.started_at,  # type: ignore[attr-defined]
        ),
    )
)  # type: ignore[attr-defined]


_FINISHED_COLUMNS = ("status", "final_answer", "usage", "error", "finished_at", "task_revision", "started_at")
_KEPT_IF_NULL = ("task_revision", "started_at")  # as _FINISH_TRAJECTORY's coalesce
_EVENT_COLUMNS = ("trajectory_id", "ordinal", "kind", "payload", "failed", "started_at", "finished_at")
_LINK_COLUMNS = ("event_id", "asset_id", "ordinal", "role")


def _insert_events(session: Session, items: list[FinishedTrajectory], plain: bool = False) -> None:
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
        plain_rows.insert(session.connection(), Event.__table__, _EVENT_COLUMNS, rows)  # type: ignore[attr-defined]
    else:
        session.execute(sa.insert(Event.__table__), rows)  # type: ignore[attr-defined]
    with_assets = {
        item.trajectory_id: item.recorder.events for item in items if any(e.assets for e in item.recorder.events)
    }
    if not with_assets:
        return
    event_ids = {
        (t, o): i
        for i, t, o in session.execute(
            sa.select(Event.id, Event.trajectory_id, Event.ordinal).where(Event.trajectory_id.in_(list(with_assets)))  # type: ignore[attr-defined, call-overload]
        ).all()
    }
    links = [
        {"event_id": event_ids[(tid, i)], "asset_id": aid, "ordinal": j, "role": role}
        for tid, events in with_assets.items()
        for i, e in enumerate(events)
        for j, (aid, role) in enumerate(e.assets)
    ]
    if plain:
        plain_rows.insert(session.connection(), EventAsset.__table__, _LINK_COLUMNS, links)  # type: ignore[attr-defined]
    else:
        session.execute(sa.insert(EventAsset.__table__), links)  # type: ignore[attr-defined]


def commit_trajectory(
    session: Session,
    trajectory_id: int,
    recorder: Recorder,
    *,
    status: str,
    final_answer: str | None,
    usage: dict[str, Any],
    error: str | None,
    cache: list[CacheEntry],
    task_revision: int | None = None,
    started_at: datetime | None = None,
) -> None:
    """Write all events, their asset links, the final state and the recorded cache entries at once.
    The trajectory has no events yet: runs reset unfinished trajectories before they start."""
    commit_many(
        session,
        [
            FinishedTrajectory(
                trajectory_id,
                recorder,
                status,
                final_answer,
                usage,
                error,
                cache,
                task_revision,  # type: ignore[arg-type]
                started_at,  # type: ignore[arg-type]
            )
        ],
    )


def store_cache(session: Session, entries: list[CacheEntry]) -> None:
    """Upsert by key: the newest response for a request wins, so replaying the latest run is exact."""
    if not entries:
        return
    upsert = _cache_upsert(session.get_bind().dialect.name)
    if upsert is not None:
        now = utcnow()
        values = {
            e.key: {"key": e.key, "kind": e.kind, "request": e.request, "response": e.response, "created_at": now}
            for e in entries
        }  # the newest entry per key within the batch
        session.execute(upsert, list(values.values()))
        return
    for entry in entries:
        row = session.exec(select(ReplayCache).where(ReplayCache.key == entry.key)).first()
        if row is None:
            session.add(ReplayCache(key=entry.key, kind=entry.kind, request=entry.request, response=entry.response))
        else:
            row.request, row.response, row.created_at = entry.request, entry.response, utcnow()
    session.flush()


_UPSERTS: dict[str, Any] = {}


def _cache_upsert(dialect: str) -> Any:
    """One INSERT … ON CONFLICT (key) DO UPDATE statement per dialect, built once and run as an
    executemany (its compiled form is then cached); None where the dialect has no such statement."""
    if dialect not in ("sqlite", "postgresql"):
        return None
    if dialect not in _UPSERTS:
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert  # type: ignore[assignment]
        stmt = insert(ReplayCache.__table__)  # type: ignore[attr-defined]
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


def cache_lookup(session: Session, key: str) -> dict[str, Any] | None:
    row = session.exec(select(ReplayCache.response).where(ReplayCache.key == key)).first()
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


def mark_unstorable(session: Session, trajectory_id: int, reason: str) -> None:
    """Last resort when even the escaped trajectory cannot be written: the row says ``failed`` and
    why, with no events, instead of staying ``pending`` with no reason."""
    _delete_events(session, [trajectory_id])
    session.execute(
        sa.update(_TRAJECTORY)
        .where(_TRAJECTORY.c.id == trajectory_id)
        .values(status="failed", error=storable(reason)[0], finished_at=utcnow())
    )
