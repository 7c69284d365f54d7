"""Queued runs: a run's trajectories as rows that ``chainmark worker`` processes on any number of hosts
claim, run and commit, with PostgreSQL as the only moving part.

Why ``SELECT … FOR UPDATE SKIP LOCKED`` on our own ``trajectoryclaim`` table rather than a job
library such as procrastinate: the unit of work already exists (a trajectory row with today's
all-or-nothing commit and resume), and what a worker needs is exactly a per-trajectory lease — host,
pid, heartbeat, expiry — that is checked in the same transaction that commits the trajectory. A job
library would add a second state machine beside ``Trajectory.status`` (its jobs table, its retry
rules, its worker loop), a dependency and, for some, a service to run; the two states could
disagree after a kill. Here the claim is one row next to the trajectory, the commit is fenced by the
claim's token, and nothing new has to be deployed: one PostgreSQL URL.

Life of a claim row: created ``open`` (no token) when the run is enqueued; a worker claims a batch
(rows not held, or held with an expiry in the past — a dead worker's), writes its token, host, pid
and an expiry, and resets the trajectories to ``running`` with no events (the harness's resume
semantics: a trajectory is written all at once when it ends, so an unfinished one has nothing to
keep). A heartbeat renews the expiry. The commit sets ``finished_at`` only where the token is still
the committer's: a worker that stalled past its expiry and lost the trajectory to another writes
nothing. The transaction that finishes the last open row marks the run ``done`` (it locks the run row
first, so two workers finishing together cannot both miss it). Times come from the database's clock,
so hosts with skewed clocks agree on expiry.

The lease mechanics (take with SKIP LOCKED, renew, give back, the token-and-attempt fence) live in
``store.claims`` and are shared with queued judging (``evaluation.judges.queue``); this module says
what they mean for a run's trajectories.

SQLite has no ``SKIP LOCKED`` and one writer at a time: queued runs are refused there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from evaluation.harness.run_status import is_queued, live_claims  # noqa: F401  (re-exported: the queue's readers use them)
from evaluation.harness.recorder import FINISHED, FinishedTrajectory, _delete_events, commit_many, mark_unstorable
from store import claims
from store.claims import NEEDS_POSTGRES, QueueUnsupported, require_postgres, this_worker
from store.dialects import conflict_insert
from store.models import Run, Trajectory, TrajectoryClaim, utcnow

__all__ = ["NEEDS_POSTGRES", "QueueUnsupported", "require_postgres", "this_worker"]
_C = TrajectoryClaim.__table__  # type: ignore[attr-defined]
_T = Trajectory.__table__  # type: ignore[attr-defined]
_R = Run.__table__  # type: ignore[attr-defined]
CLAIMABLE = ("queued", "running")  # run statuses whose trajectories workers take


_now = claims.now


def enqueue(session: Session, run_id: int, task_ids: list[int], *, retry_failed: bool = False) -> int:
    """Make ``run_id`` a queued run: a trajectory row per task and an open claim row per unfinished
    trajectory (failed ones too with ``retry_failed``). Rows held by a live worker are left alone.
    The run becomes ``queued`` (``running`` if workers hold some of it) or ``done`` when nothing is
    left. Returns how many trajectories are open."""
    from evaluation.harness.recorder import ensure_trajectories

    run = session.exec(select(Run).where(Run.id == run_id).with_for_update()).one()
    ensure_trajectories(session, run_id, task_ids)
    if retry_failed:
        failed = select(_T.c.id).where(_T.c.run_id == run_id, _T.c.status == "failed")
        session.execute(sa.update(_T).where(_T.c.id.in_(failed)).values(status="pending"))
    unfinished = sa.select(_T.c.id, _T.c.run_id, sa.literal(0)).where(
        _T.c.run_id == run_id, _T.c.status.not_in(FINISHED)
    )
    stmt = conflict_insert(session)(_C).from_select(["trajectory_id", "run_id", "attempts"], unfinished)
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["trajectory_id"],
            set_={"finished_at": None, "token": None, "expires_at": None},
            where=_C.c.finished_at.is_not(None),
        )
    )
    open_rows = open_count(session, run_id)
    held = live_claims(session, [run_id]).get(run_id, 0)
    run.config = {**{k: v for k, v in (run.config or {}).items() if k != "stopped_because"}, "queue": True}
    run.status = "done" if open_rows == 0 else "running" if held else "queued"
    run.finished_at = None if open_rows else utcnow()
    session.flush()
    return open_rows


def open_count(session: Session, run_id: int) -> int:
    return int(
        session.execute(
            sa.select(sa.func.count()).select_from(_C).where(_C.c.run_id == run_id, _C.c.finished_at.is_(None))
        ).scalar()
        or 0
    )


def queued_runs(session: Session, run_ids: list[int] | None = None) -> list[int]:
    """Queued runs (status queued or running) with open trajectories, oldest first."""
    stmt = (
        sa.select(_C.c.run_id)
        .join(_R, _R.c.id == _C.c.run_id)
        .where(_C.c.finished_at.is_(None), _R.c.status.in_(CLAIMABLE))
        .distinct()
        .order_by(_C.c.run_id)
    )
    if run_ids:
        stmt = stmt.where(_C.c.run_id.in_(run_ids))
    return [int(r) for r in session.execute(stmt).scalars().all()]


def claimable(session: Session, run_id: int) -> int:
    """Open trajectories of the run nobody holds (or whose holder's claim expired)."""
    return int(
        session.execute(
            sa.select(sa.func.count()).select_from(_C).where(_C.c.run_id == run_id, claims.is_free(_C))
        ).scalar()
        or 0
    )


def run_status(session: Session, run_id: int) -> str | None:
    return session.execute(sa.select(_R.c.status).where(_R.c.id == run_id)).scalar()


def claim(session: Session, run_id: int, token: str, n: int, ttl: float) -> list[tuple[int, int, int]] | None:
    """Take up to ``n`` open trajectories of the run for ``token``: (trajectory id, task id, attempt)
    in task order, each reset to ``running`` with no events. The attempt number goes to the commit
    fence with the token, so a worker that lost a claim and got it back later cannot commit its
    first, abandoned execution under the second claim. None when the run no longer takes workers
    (cancelled, finished, failed)."""
    if run_status(session, run_id) not in CLAIMABLE:
        return None
    ids = claims.take(session, _C, _C.c.trajectory_id, [_C.c.run_id == run_id], _C.c.trajectory_id, n, token, ttl)
    if not ids:
        return []
    _delete_events(session, list(ids))  # none unless written outside a claim; a takeover starts clean
    session.execute(
        sa.update(_T)
        .where(_T.c.id.in_(ids))
        .values(
            status="running",
            final_answer=None,
            error=None,
            usage=sa.literal_column("'{}'"),
            finished_at=None,
            started_at=_now(),
        )
    )
    first = sa.select(_R.c.id).where(_R.c.id == run_id, _R.c.status == "queued").with_for_update(skip_locked=True)
    if session.execute(first).first() is not None:  # the run's first claim (a concurrent one may be it instead)
        session.execute(
            sa.update(_R)
            .where(_R.c.id == run_id)
            .values(status="running", started_at=sa.func.coalesce(_R.c.started_at, _now()), finished_at=None)
        )
    rows = session.execute(
        sa.select(_T.c.id, _T.c.task_id, _C.c.attempts)
        .join(_C, _C.c.trajectory_id == _T.c.id)
        .where(_T.c.id.in_(ids))
        .order_by(_T.c.task_id)
    ).all()
    return [(int(t), int(k), int(a)) for t, k, a in rows]


def renew(session: Session, token: str, ttl: float, run_ids: list[int]) -> dict[int, str]:
    """Push our claims' expiry forward; returns the status of each run we work on (cancel shows here)."""
    claims.renew(session, _C, token, ttl)
    if not run_ids:
        return {}
    return {int(i): str(s) for i, s in session.execute(sa.select(_R.c.id, _R.c.status).where(_R.c.id.in_(run_ids)))}


def release(session: Session, token: str, trajectory_ids: list[int] | None = None) -> int:
    """Give back claims we hold but will not finish (stopping, cancelled): open again at once, and
    their trajectories ``pending`` (never started, or stopped with nothing written)."""
    ids = claims.release(session, _C, _C.c.trajectory_id, token, trajectory_ids)
    if ids:
        session.execute(
            sa.update(_T)
            .where(_T.c.id.in_(ids), _T.c.status.not_in(FINISHED))
            .values(status="pending", started_at=None)
        )
    return len(ids)


def _fence(session: Session, token: str, held: list[tuple[int, int]]) -> set[int]:
    """Mark our claims (trajectory id, attempt) finished and return the trajectories still ours."""
    return claims.fence(session, _C, _C.c.trajectory_id, token, held)


def _finish_if_empty(session: Session, run_id: int) -> None:
    """The run is ``done`` once no trajectory is open. Locks the run row first: of two workers
    committing the last trajectories at once, the second sees the first's commit."""
    session.execute(sa.select(_R.c.id).where(_R.c.id == run_id).with_for_update())
    if open_count(session, run_id) == 0:
        session.execute(
            sa.update(_R).where(_R.c.id == run_id, _R.c.status.in_(CLAIMABLE)).values(status="done", finished_at=_now())
        )


@dataclass
class Fenced:
    """A commit of claimed trajectories: ``lost`` collects those whose claim another worker had
    taken over by then; they were not written."""

    token: str
    run_id: int
    attempts: dict[int, int] = field(default_factory=dict)  # trajectory id → the attempt we claimed
    lost: set[int] = field(default_factory=set)

    def _claims(self, ids: list[int]) -> list[tuple[int, int]]:
        return [(i, self.attempts.get(i, 0)) for i in ids]

    def commit(self, session: Session, items: list[FinishedTrajectory]) -> None:
        kept = _fence(session, self.token, self._claims([i.trajectory_id for i in items]))
        self.lost.update(i.trajectory_id for i in items if i.trajectory_id not in kept)
        commit_many(session, [i for i in items if i.trajectory_id in kept])
        _finish_if_empty(session, self.run_id)

    def mark(self, session: Session, trajectory_id: int, reason: str) -> None:
        if not _fence(session, self.token, self._claims([trajectory_id])):
            self.lost.add(trajectory_id)
            return
        mark_unstorable(session, trajectory_id, reason)
        _finish_if_empty(session, self.run_id)


@dataclass
class WorkerRow:
    host: str
    pid: int
    done: int = 0
    failed: int = 0
    holding: int = 0  # claims alive right now
    calls: int = 0
    tokens: int = 0
    retries: int = 0
    takeovers: int = 0  # trajectories this worker finished after another's claim expired

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "pid": self.pid,
            "done": self.done,
            "failed": self.failed,
            "holding": self.holding,
            "calls": self.calls,
            "tokens": self.tokens,
            "retries": self.retries,
            "takeovers": self.takeovers,
        }


def workers_of(session: Session, run_id: int) -> list[WorkerRow]:
    """Per host and pid: what each worker finished (done, failed, model calls, tokens, retries) and
    holds now. Empty for a run that was never queued."""
    live = claims.is_held(_C)
    rows = session.execute(
        sa.select(_C.c.host, _C.c.pid, _C.c.finished_at.is_not(None), live, _C.c.attempts, _T.c.status, _T.c.usage)
        .join(_T, _T.c.id == _C.c.trajectory_id)
        .where(_C.c.run_id == run_id, _C.c.host.is_not(None))
        .execution_options(yield_per=2000)
    )
    out: dict[tuple[str, int], WorkerRow] = {}
    for host, pid, finished, holding, attempts, status, usage in rows:
        w = out.setdefault((host, pid), WorkerRow(host, pid))
        if holding:
            w.holding += 1
        if not finished:
            continue
        w.done += status == "done"
        w.failed += status == "failed"
        w.takeovers += attempts > 1
        usage = usage or {}
        w.calls += int(usage.get("api_calls") or 0)
        w.tokens += int(usage.get("total_tokens") or 0)
        w.retries += int(usage.get("retries") or 0)
    return sorted(out.values(), key=lambda w: (w.host, w.pid))


def cancel(session: Session, run_id: int) -> str:
    """Mark a queued run cancelled: workers stop claiming its trajectories at their next claim or
    heartbeat, finish what they are running and give the rest back. Returns the status before."""
    run = session.exec(select(Run).where(Run.id == run_id).with_for_update()).one()
    before = run.status
    if run.status in CLAIMABLE:
        run.status = "cancelled"
        session.flush()
    return before
