"""Read queries for the run launcher and monitor: choices for the form, runs with their counts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select, col

from annotation.review.blind import blind_scope
from evaluation.harness import MODES, list_endpoints
from evaluation.harness.lease import leases, shown_status
from evaluation.harness.run_status import TASK_SET
from evaluation.harness.workqueue import WorkerRow, is_queued, live_claims, workers_of
from evaluation.judges.queue import JudgeProgress
from evaluation.judges.queue import progress as judge_progress
from store.urls import without_password
from store.models import Benchmark, ModelEndpoint, Run, Task, Trajectory, utcnow
from tui.blind_view import HIDDEN_MODEL


@dataclass(frozen=True)
class LaunchChoices:
    benchmarks: list[tuple[str, int, str]]  # name, tasks, tool set
    endpoints: list[tuple[str, str]]  # name, model @ base url
    modes: list[str]


def launch_choices(session: Session) -> LaunchChoices:
    counts = dict(session.exec(select(Task.benchmark_id, sa.func.count()).group_by(Task.benchmark_id)).all())
    benches = [
        (b.name, counts.get(b.id, 0), b.tool_set or "")
        for b in session.exec(select(Benchmark).order_by(Benchmark.name)).all()
    ]
    endpoints = [(e.name, f"{e.model} @ {without_password(e.base_url)}") for e in list_endpoints(session)]
    return LaunchChoices(benches, endpoints, list(MODES))


@dataclass(frozen=True)
class LiveTrajectory:
    """A trajectory being worked on, as its executor last reported it to the database."""

    task_id: int
    calls: int
    tokens: int
    step: str
    seconds: float


@dataclass(frozen=True)
class RunRow:
    id: int
    name: str
    benchmark: str
    endpoint: str
    mode: str
    status: str
    concurrency: int
    total: int
    by_status: dict[str, int]
    tokens: int
    api_calls: int
    errors: list[tuple[int, str]] = field(default_factory=list)
    created: str = ""
    live: list["LiveTrajectory"] = field(default_factory=list)  # only for the selected run
    workers: list[WorkerRow] = field(default_factory=list)  # a queued run's worker processes (selected run)
    judging: list[JudgeProgress] = field(default_factory=list)  # its queued judges, as `runs show` (selected run)
    hidden: str = ""  # blind mode: why the name and endpoint are withheld from the viewer ("" when shown)

    @property
    def finished(self) -> int:
        return self.by_status.get("done", 0) + self.by_status.get("failed", 0)


def _planned(session: Session, run: Run, made: int) -> int:
    """How many tasks the run is made of: the set fixed when it was created; for a run stored before
    sets were kept, the ``made`` trajectories once it started, else what its selection picks now."""
    cfg = run.config or {}
    if TASK_SET in cfg:
        return len(cfg[TASK_SET])
    if made:
        return made
    stmt = select(sa.func.count()).select_from(Task).where(Task.benchmark_id == run.benchmark_id)
    if cfg.get("task_ids"):
        stmt = stmt.where(Task.id.in_(cfg["task_ids"]))  # type: ignore[union-attr]
    if cfg.get("status"):
        stmt = stmt.where(Task.status == cfg["status"])
    n = int(session.exec(stmt).one())
    return min(n, int(cfg["limit"])) if cfg.get("limit") else n


def run_rows(
    session: Session, limit: int = 200, with_errors_of: int | None = None, viewer: str | None = None
) -> list[RunRow]:
    """Newest runs first, each with trajectory counts by status and token totals; a run ``viewer`` still
    owes blind work on shows no name or endpoint (``hidden`` says why)."""
    scope = blind_scope(session, viewer)
    runs = session.exec(select(Run).order_by(Run.id.desc()).limit(limit)).all()  # type: ignore[union-attr]
    ids = [r.id for r in runs]
    benches = dict(session.exec(select(Benchmark.id, Benchmark.name)).all())
    endpoints = dict(session.exec(select(ModelEndpoint.id, ModelEndpoint.name)).all())
    counts: dict[int, dict[str, int]] = {}
    tokens: dict[int, list[int]] = {}
    if ids:
        for run_id, status, n in session.exec(
            select(Trajectory.run_id, Trajectory.status, sa.func.count())
            .where(Trajectory.run_id.in_(ids))  # type: ignore[attr-defined]
            .group_by(Trajectory.run_id, Trajectory.status)  # type: ignore[arg-type]
        ).all():
            counts.setdefault(run_id, {})[status] = n
        for run_id, usage in session.exec(
            select(Trajectory.run_id, Trajectory.usage).where(Trajectory.run_id.in_(ids))  # type: ignore[attr-defined]
        ).all():  # type: ignore[union-attr]
            u = usage or {}
            acc = tokens.setdefault(run_id, [0, 0])
            acc[0] += int(u.get("total_tokens") or 0)
            acc[1] += int(u.get("api_calls") or 0)
    held = leases(session, [r.id or 0 for r in runs])
    queued = [r.id or 0 for r in runs if is_queued(r)]
    claims = live_claims(session, queued) if queued else {}
    out = []
    for r in runs:
        errors: list[tuple[int, str]] = []
        if with_errors_of == r.id:
            errors = [
                (tid, err or "")
                for tid, err in session.exec(
                    select(Trajectory.task_id, Trajectory.error)
                    .where(Trajectory.run_id == r.id, Trajectory.status == "failed")
                    .order_by(col(Trajectory.id))
                    .limit(200)
                ).all()
            ]
        live: list[LiveTrajectory] = []
        shown = shown_status(r.status, held.get(r.id or 0), claims.get(r.id or 0, 0) if is_queued(r) else None)
        if with_errors_of == r.id and shown == "running":  # an interrupted run's rows are no one's work
            now = utcnow()
            for t in session.exec(
                select(Trajectory)
                .where(Trajectory.run_id == r.id, Trajectory.status == "running")
                .order_by(col(Trajectory.task_id))
            ).all():
                u = t.usage or {}
                started = (
                    t.started_at.replace(tzinfo=now.tzinfo)
                    if t.started_at and t.started_at.tzinfo is None
                    else t.started_at
                )
                live.append(
                    LiveTrajectory(
                        t.task_id,
                        int(u.get("api_calls") or 0),
                        int(u.get("total_tokens") or 0),
                        str(u.get("step") or ""),
                        (now - started).total_seconds() if started else 0.0,
                    )
                )
        hidden = scope.why_hidden([r.id])
        out.append(
            RunRow(
                r.id or 0,
                "" if hidden else r.name or "",
                benches.get(r.benchmark_id, "?"),
                HIDDEN_MODEL if hidden else endpoints.get(r.endpoint_id, "") if r.endpoint_id else "",
                r.mode,
                shown,
                r.concurrency,
                _planned(session, r, sum(counts.get(r.id or 0, {}).values()))
                if r.kind == "model"
                else sum(counts.get(r.id or 0, {}).values()),
                counts.get(r.id or 0, {}),
                *_two(tokens.get(r.id or 0, [0, 0])),
                errors,
                r.created_at.isoformat()[:16].replace("T", " ") if r.created_at else "",
                live,
                workers=workers_of(session, r.id or 0) if with_errors_of == r.id and is_queued(r) else [],
                judging=judge_progress(session, r.id or 0) if with_errors_of == r.id else [],
                hidden=hidden,
            )
        )
    return out


def _two(pair: list[int]) -> tuple[int, int]:
    return pair[0], pair[1]


def first_trajectory(session: Session, run_id: int) -> int | None:
    return session.exec(select(Trajectory.id).where(Trajectory.run_id == run_id).order_by(col(Trajectory.id))).first()


def parse_ids(text: str) -> list[int] | None:
    """'3,5,9-12' → [3, 5, 9, 10, 11, 12]; empty → None (all tasks)."""
    text = text.strip()
    if not text:
        return None
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, dash, hi = part.partition("-")
        try:
            if dash:
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                out += list(range(a, b + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise ValueError(f"task ids: {part!r} is not a number or a range like 9-12") from None
    return out


def optional_number(text: str, field_name: str, kind: Any = int) -> Any:
    text = text.strip()
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{field_name} must be a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:  # nan/inf would mean "no limit" or "stop at once"
        raise ValueError(f"{field_name} must be a finite number above 0, got {text!r}")
    return value
