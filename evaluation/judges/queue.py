"""Queued judging: ``chainmark judge … --queue`` puts one work item per trajectory in ``judgeclaim``;
``chainmark worker`` processes on any hosts claim items and judge them with ``judge_run``.

The lease model is the queued runs' one (``store.claims``): rows taken with ``SKIP LOCKED``, an
expiry renewed by the worker's heartbeat, a dead worker's rows taken over once expired. An item is
one trajectory before one judge (template, endpoint, mode): its questions only depend on that
trajectory, so judging items apart asks exactly what judging the run at once asks. Each round's
verdicts are written in a transaction that first locks the item's row and checks the token and
attempt are still the worker's (``guard``), so a worker whose item was taken over writes nothing;
the last transaction marks the item finished the same way. A takeover re-reads the stored verdicts,
so rounds a dead worker already wrote are not asked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session

from evaluation.judges.client import JudgeError
from evaluation.judges.runner import SetupCache, judge_run
from store import claims, session_scope
from store.blobs import BlobStore
from store.dialects import conflict_insert, is_postgresql
from store.models import JudgeClaim, Trajectory

_J = JudgeClaim.__table__  # type: ignore[attr-defined]
_T = Trajectory.__table__  # type: ignore[attr-defined]
JUDGEABLE = ("done", "failed")  # finished trajectories; a pending or running one has nothing to judge yet
CANCELLED = "cancelled"  # the error of items finished by ``cancel`` rather than judged


@dataclass(frozen=True)
class JudgeItem:
    id: int
    run_id: int
    trajectory_id: int
    judge: str
    endpoint: str
    mode: str
    attempt: int


def enqueue(session: Session, run_id: int, judge: str, endpoint: str, mode: str = "faithful") -> int:
    """An open item per finished trajectory of the run for this judge. Items finished before are
    opened again (new trajectories, re-run ones, or failed items get judged; answered questions are
    not asked again); items a live worker holds are left alone. Returns how many items are open."""
    finished = sa.select(_T.c.id, _T.c.run_id, sa.literal(judge), sa.literal(endpoint), sa.literal(mode)).where(
        _T.c.run_id == run_id, _T.c.status.in_(JUDGEABLE)
    )
    cols = ["trajectory_id", "run_id", "judge", "endpoint", "mode"]
    stmt = conflict_insert(session)(_J).from_select(
        [*cols, "attempts", "verdicts", "model_calls", "cache_hits"],
        finished.add_columns(sa.literal(0), sa.literal(0), sa.literal(0), sa.literal(0)),
    )
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["trajectory_id", "judge", "endpoint", "mode"],
            set_={"finished_at": None, "token": None, "expires_at": None, "error": None},
            where=_J.c.finished_at.is_not(None),
        )
    )
    return int(
        session.execute(
            sa.select(sa.func.count()).where(
                _J.c.run_id == run_id,
                _J.c.judge == judge,
                _J.c.endpoint == endpoint,
                _J.c.mode == mode,
                _J.c.finished_at.is_(None),
            )
        ).scalar()
        or 0
    )


def not_judgeable(session: Session, run_id: int) -> int:
    """Trajectories of the run not finished yet: ``enqueue`` leaves them out."""
    return int(
        session.execute(sa.select(sa.func.count()).where(_T.c.run_id == run_id, _T.c.status.not_in(JUDGEABLE))).scalar()
        or 0
    )


def cancel(session: Session, run_id: int, judge: str, endpoint: str, mode: str = "faithful") -> tuple[int, int]:
    """Finish the judge's open items that no live worker holds as cancelled (``enqueue`` opens them
    again). Items being judged right now are left to finish. Returns (cancelled, still running)."""
    c = _J.c
    return _cancel(session, [c.run_id == run_id, c.judge == judge, c.endpoint == endpoint, c.mode == mode])


def cancel_run(session: Session, run_id: int) -> tuple[int, int]:
    """``cancel`` for every judge queued for the run (``runs cancel``: nothing more is spent on it).
    Returns (cancelled, still running); (0, 0) on SQLite, which never queues."""
    if not is_postgresql(session):
        return 0, 0
    return _cancel(session, [_J.c.run_id == run_id])


def _cancel(session: Session, mine: list[Any]) -> tuple[int, int]:
    c = _J.c
    free = sa.select(c.id).where(claims.is_free(_J), *mine).with_for_update(skip_locked=True)
    done = session.execute(
        sa.update(_J).where(c.id.in_(free)).values(finished_at=claims.now(), error=CANCELLED).returning(c.id)
    )
    cancelled = len(done.scalars().all())
    running = session.execute(sa.select(sa.func.count()).where(claims.is_held(_J), *mine)).scalar()
    return cancelled, int(running or 0)


def _scope(run_ids: list[int] | None) -> list[Any]:
    return [_J.c.run_id.in_(run_ids)] if run_ids else []


def claimable(session: Session, run_ids: list[int] | None = None) -> int:
    return int(session.execute(sa.select(sa.func.count()).where(claims.is_free(_J), *_scope(run_ids))).scalar() or 0)


def open_items(session: Session, run_ids: list[int] | None = None) -> int:
    return int(
        session.execute(sa.select(sa.func.count()).where(_J.c.finished_at.is_(None), *_scope(run_ids))).scalar() or 0
    )


def claim(session: Session, token: str, n: int, ttl: float, run_ids: list[int] | None = None) -> list[JudgeItem]:
    """Take up to ``n`` free items (oldest first) for ``token``."""
    ids = claims.take(session, _J, _J.c.id, _scope(run_ids), _J.c.id, n, token, ttl)
    if not ids:
        return []
    rows = session.execute(
        sa.select(_J.c.id, _J.c.run_id, _J.c.trajectory_id, _J.c.judge, _J.c.endpoint, _J.c.mode, _J.c.attempts)
        .where(_J.c.id.in_(ids))
        .order_by(_J.c.id)
    ).all()
    return [JudgeItem(*r) for r in rows]


def renew(session: Session, token: str, ttl: float) -> None:
    claims.renew(session, _J, token, ttl)


def release(session: Session, token: str, ids: list[int] | None = None) -> int:
    return len(claims.release(session, _J, _J.c.id, token, ids))


def still_ours(session: Session, token: str, item: JudgeItem) -> bool:
    """Lock the item's row for this transaction; True while ``token`` holds it under this attempt."""
    return bool(claims.fence(session, _J, _J.c.id, token, [(item.id, item.attempt)], finish=False))


def judge_item(
    engine: Engine,
    blobs: BlobStore,
    token: str,
    item: JudgeItem,
    actor: str | None = None,
    setups: SetupCache | None = None,
) -> dict[str, Any]:
    """Judge one claimed item with ``judge_run`` and finish it, both fenced by the claim. Returns
    the judge's counts, ``lost`` when the item was taken over (then nothing more was written) and
    ``error`` when the judge could not be asked (the item is finished as failed, with the reason).
    ``setups``: the worker's judge set-ups, kept across its items (one engine per cache)."""
    error: str | None = None
    try:
        setup = setups.get(engine, item.judge, item.endpoint, item.mode, actor) if setups is not None else None
        stats = judge_run(
            engine,
            blobs,
            item.run_id,
            item.judge,
            item.endpoint,
            mode=item.mode,
            actor=actor,
            trajectory_ids=[item.trajectory_id],
            guard=lambda s: still_ours(s, token, item),
            setup=setup,
        )
    except JudgeError as exc:
        stats, error = {"verdicts": 0, "model_calls": 0, "cache_hits": 0, "lost": False}, str(exc)
    stats["error"] = error
    if stats.get("lost"):
        return stats
    with session_scope(engine, actor=actor) as s:
        kept = claims.fence(
            s,
            _J,
            _J.c.id,
            token,
            [(item.id, item.attempt)],
            verdicts=_J.c.verdicts + int(stats.get("verdicts") or 0),
            model_calls=_J.c.model_calls + int(stats.get("model_calls") or 0),
            cache_hits=_J.c.cache_hits + int(stats.get("cache_hits") or 0),
            error=error,
        )
    stats["lost"] = not kept
    return stats


def finish_failed(session: Session, token: str, item: JudgeItem, reason: str) -> bool:
    """Finish an item as failed with ``reason`` while it is still ours (fenced)."""
    return bool(claims.fence(session, _J, _J.c.id, token, [(item.id, item.attempt)], error=reason))


@dataclass
class JudgeProgress:
    """One judge's items in a run: what is finished, failed, open and held now."""

    judge: str
    endpoint: str
    mode: str
    items: int = 0
    judged: int = 0
    failed: int = 0
    cancelled: int = 0
    open: int = 0
    running: int = 0  # held by a live worker now
    verdicts: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    takeovers: int = 0  # items claimed more than once
    workers: int = 0  # distinct host/pid that claimed items

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def progress(session: Session, run_id: int) -> list[JudgeProgress]:
    """Per judge queued for the run (empty when none was, and on SQLite, which never queues)."""
    if not is_postgresql(session):
        return []
    held = claims.is_held(_J)
    c = _J.c
    rows = session.execute(
        sa.select(
            c.judge,
            c.endpoint,
            c.mode,
            sa.func.count(),
            sa.func.count().filter(sa.and_(c.finished_at.is_not(None), c.error.is_(None))),
            sa.func.count().filter(sa.and_(c.finished_at.is_not(None), c.error.is_not(None), c.error != CANCELLED)),
            sa.func.count().filter(sa.and_(c.finished_at.is_not(None), c.error == CANCELLED)),
            sa.func.count().filter(c.finished_at.is_(None)),
            sa.func.count().filter(held),
            sa.func.coalesce(sa.func.sum(c.verdicts), 0),
            sa.func.coalesce(sa.func.sum(c.model_calls), 0),
            sa.func.coalesce(sa.func.sum(c.cache_hits), 0),
            sa.func.count().filter(c.attempts > 1),
            sa.func.count(sa.distinct(sa.func.concat(c.host, ":", c.pid))).filter(c.host.is_not(None)),
        )
        .where(c.run_id == run_id)
        .group_by(c.judge, c.endpoint, c.mode)
        .order_by(c.judge, c.endpoint, c.mode)
    ).all()
    return [JudgeProgress(r[0], r[1], r[2], *(int(v) for v in r[3:])) for r in rows]
