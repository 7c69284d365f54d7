"""Read queries that return plain dataclasses, so callers (CLI, TUI workers) never hold live ORM rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from store.models import Benchmark, Checkpoint, ReferenceStep, Run, Task, TaskAsset


@dataclass(frozen=True)
class BenchmarkSummary:
    id: int
    name: str
    source_format: str
    tool_set: str | None
    tasks: int
    by_status: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TaskSummary:
    id: int
    benchmark: str
    source_id: str
    query: str
    category: str | None
    level: str | None
    status: str
    revision: int
    answer_kind: str
    steps: int
    checkpoints: int
    images: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def benchmark_summaries(session: Session) -> list[BenchmarkSummary]:
    counts: dict[int, dict[str, int]] = {}
    rows = session.exec(
        select(Task.benchmark_id, Task.status, sa.func.count()).group_by(Task.benchmark_id, Task.status)
    ).all()
    for bench_id, status, n in rows:
        counts.setdefault(bench_id, {})[status] = n
    out = []
    for b in session.exec(select(Benchmark).order_by(Benchmark.name)).all():
        by_status = counts.get(b.id or 0, {})
        out.append(BenchmarkSummary(b.id or 0, b.name, b.source_format, b.tool_set,
                                    sum(by_status.values()), dict(sorted(by_status.items()))))
    return out


def _count_by_task(session: Session, column: Any, task_ids: list[int], *where: Any) -> dict[int, int]:
    if not task_ids:
        return {}
    stmt = select(column, sa.func.count()).where(column.in_(task_ids), *where).group_by(column)
    return {tid: n for tid, n in session.exec(stmt).all()}


def task_summaries(
    session: Session,
    benchmark: str | None = None,
    *,
    status: str | None = None,
    category: str | None = None,
    text: str | None = None,
    after_id: int = 0,
    limit: int | None = None,
) -> list[TaskSummary]:
    """Tasks in id order, filtered; keyset-paged with ``after_id`` so deep pages stay fast."""
    stmt = select(Task, Benchmark.name).join(Benchmark, Benchmark.id == Task.benchmark_id)
    if benchmark:
        stmt = stmt.where(Benchmark.name == benchmark)
    if status:
        stmt = stmt.where(Task.status == status)
    if category:
        stmt = stmt.where(Task.category == category)
    if text:
        stmt = stmt.where(sa.func.lower(Task.query).contains(text.lower()))
    stmt = stmt.where(Task.id > after_id).order_by(Task.id)
    if limit:
        stmt = stmt.limit(limit)
    rows = session.exec(stmt).all()
    ids = [t.id for t, _ in rows if t.id is not None]
    steps = _count_by_task(session, ReferenceStep.task_id, ids)
    cps = _count_by_task(session, Checkpoint.task_id, ids)
    imgs = _count_by_task(session, TaskAsset.task_id, ids, TaskAsset.role == "query_image")
    return [
        TaskSummary(
            id=t.id or 0, benchmark=bname, source_id=t.source_id, query=t.query, category=t.category,
            level=t.level, status=t.status, revision=t.revision,
            answer_kind=(t.answer_spec or {}).get("kind", "none"),
            steps=steps.get(t.id or 0, 0), checkpoints=cps.get(t.id or 0, 0), images=imgs.get(t.id or 0, 0),
        )
        for t, bname in rows
    ]


def recent_runs(session: Session, limit: int = 10) -> list[dict[str, Any]]:
    stmt = (select(Run, Benchmark.name).join(Benchmark, Benchmark.id == Run.benchmark_id)
            .order_by(Run.id.desc()).limit(limit))  # type: ignore[union-attr]
    return [{"id": r.id, "name": r.name, "benchmark": b, "mode": r.mode, "status": r.status,
             "created_at": r.created_at.isoformat() if r.created_at else None}
            for r, b in session.exec(stmt).all()]
