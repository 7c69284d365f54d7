"""Events of a trajectory, kept in memory while it runs and written in one transaction when it ends
(so a killed run never leaves half a trajectory behind: resume deletes and redoes unfinished ones)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from store import events as ev
from store.models import Event, EventAsset, ReplayCache, Trajectory, utcnow

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

    def add(self, kind: str, payload: dict[str, Any], *, failed: bool = False, started_at: datetime | None = None,
            assets: list[tuple[int, str]] | None = None) -> PendingEvent:
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
    event_ids = select(Event.id).where(Event.trajectory_id.in_(trajectory_ids))  # type: ignore[union-attr]
    session.exec(sa.delete(EventAsset).where(EventAsset.event_id.in_(event_ids)))  # type: ignore[call-overload,union-attr]
    result = session.exec(sa.delete(Event).where(Event.trajectory_id.in_(trajectory_ids)))  # type: ignore[call-overload,union-attr]
    return result.rowcount or 0


def ensure_trajectories(session: Session, run_id: int, task_ids: list[int]) -> dict[int, int]:
    """A ``pending`` trajectory row per task (existing rows kept), created in one go so starting a
    trajectory later costs no write. Returns task id → trajectory id."""
    existing = dict(session.exec(select(Trajectory.task_id, Trajectory.id).where(Trajectory.run_id == run_id)).all())
    missing = [t for t in task_ids if t not in existing]
    if missing:
        rows = [Trajectory(run_id=run_id, task_id=t, status="pending") for t in missing]
        session.add_all(rows)
        session.flush()
        existing.update({r.task_id: r.id for r in rows})
    return {t: existing[t] for t in task_ids}  # type: ignore[misc]


def reset_unfinished(session: Session, run_id: int) -> list[int]:
    """Unfinished trajectories of a run go back to ``pending`` with their partial events deleted, in
    the caller's transaction. Returns their task ids."""
    rows = session.exec(select(Trajectory).where(Trajectory.run_id == run_id,
                                                 Trajectory.status.not_in(FINISHED))).all()  # type: ignore[attr-defined]
    _delete_events(session, [r.id or 0 for r in rows])
    for r in rows:
        r.status, r.final_answer, r.error, r.usage, r.started_at, r.finished_at = "pending", None, None, {}, None, None
    session.flush()
    return [r.task_id for r in rows]


def finished_task_ids(session: Session, run_id: int, statuses: tuple[str, ...] = FINISHED) -> set[int]:
    return set(session.exec(select(Trajectory.task_id).where(Trajectory.run_id == run_id,
                                                             Trajectory.status.in_(statuses))).all())  # type: ignore[attr-defined]


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


def commit_many(session: Session, items: list[FinishedTrajectory]) -> None:
    """Group commit: several finished trajectories in one transaction (each still all-or-nothing)."""
    for item in items:
        commit_trajectory(session, item.trajectory_id, item.recorder, status=item.status,
                          final_answer=item.final_answer, usage=item.usage, error=item.error, cache=item.cache,
                          task_revision=item.task_revision, started_at=item.started_at)


def commit_trajectory(session: Session, trajectory_id: int, recorder: Recorder, *, status: str,
                      final_answer: str | None, usage: dict[str, Any], error: str | None,
                      cache: list[CacheEntry], task_revision: int | None = None,
                      started_at: datetime | None = None) -> None:
    """Write all events, their asset links, the final state and the recorded cache entries at once.
    The trajectory has no events yet: runs reset unfinished trajectories before they start."""
    traj = session.get(Trajectory, trajectory_id)
    if traj is None:
        raise LookupError(f"trajectory {trajectory_id} vanished")
    if traj.status in FINISHED:
        _delete_events(session, [trajectory_id])  # re-running a finished trajectory replaces it
    if task_revision is not None:
        traj.task_revision = task_revision
    if started_at is not None:
        traj.started_at = started_at
    rows = [Event(trajectory_id=trajectory_id, ordinal=i, kind=e.kind, payload=e.payload, failed=e.failed,
                  started_at=e.started_at, finished_at=e.finished_at) for i, e in enumerate(recorder.events)]
    session.add_all(rows)
    session.flush()
    links = [EventAsset(event_id=row.id or 0, asset_id=aid, ordinal=j, role=role)
             for row, e in zip(rows, recorder.events) for j, (aid, role) in enumerate(e.assets)]
    if links:
        session.add_all(links)
    traj.status, traj.final_answer, traj.usage, traj.error = status, final_answer, usage, error
    traj.finished_at = utcnow()
    store_cache(session, cache)
    session.flush()


def store_cache(session: Session, entries: list[CacheEntry]) -> None:
    """Upsert by key: the newest response for a request wins, so replaying the latest run is exact."""
    if not entries:
        return
    dialect = session.get_bind().dialect.name
    if dialect in ("sqlite", "postgresql"):
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert  # type: ignore[assignment]
        now = utcnow()
        values = {e.key: {"key": e.key, "kind": e.kind, "request": e.request, "response": e.response,
                          "created_at": now} for e in entries}  # one row per key within the batch
        stmt = insert(ReplayCache).values(list(values.values()))
        stmt = stmt.on_conflict_do_update(index_elements=["key"], set_={
            "kind": stmt.excluded.kind, "request": stmt.excluded.request, "response": stmt.excluded.response,
            "created_at": stmt.excluded.created_at})
        session.exec(stmt)  # type: ignore[call-overload]
        return
    for entry in entries:
        row = session.exec(select(ReplayCache).where(ReplayCache.key == entry.key)).first()
        if row is None:
            session.add(ReplayCache(key=entry.key, kind=entry.kind, request=entry.request, response=entry.response))
        else:
            row.request, row.response, row.created_at = entry.request, entry.response, utcnow()
    session.flush()


def cache_lookup(session: Session, key: str) -> dict[str, Any] | None:
    row = session.exec(select(ReplayCache.response).where(ReplayCache.key == key)).first()
    return row if isinstance(row, dict) else None
