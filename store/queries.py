"""Read queries that return plain dataclasses, so callers (CLI, TUI workers) never hold live ORM rows."""

from __future__ import annotations

from collections.abc import Iterator
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
        out.append(
            BenchmarkSummary(
                b.id or 0, b.name, b.source_format, b.tool_set, sum(by_status.values()), dict(sorted(by_status.items()))
            )
        )
    return out


IN_CHUNK = 900  # ids per ``IN (...)``: far under every SQLite build's parameter limit (999 on old ones)


def _count_by_task(session: Session, column: Any, task_ids: list[int], *where: Any) -> dict[int, int]:
    """Counts per task id, asked in chunks so no ``IN (...)`` grows past the parameter limit."""
    out: dict[int, int] = {}
    for i in range(0, len(task_ids), IN_CHUNK):
        stmt = select(column, sa.func.count()).where(column.in_(task_ids[i : i + IN_CHUNK]), *where).group_by(column)
        out.update({tid: n for tid, n in session.exec(stmt).all()})
    return out


_SUMMARY_COLUMNS = (
    Task.id,
    Benchmark.name,
    Task.source_id,
    Task.query,
    Task.category,
    Task.level,
    Task.status,
    Task.revision,
    Task.answer_spec,
)


def _task_filter(stmt: Any, benchmark: str | None, status: str | None, category: str | None, text: str | None) -> Any:
    stmt = stmt.join(Benchmark, Benchmark.id == Task.benchmark_id)
    if benchmark:
        stmt = stmt.where(Benchmark.name == benchmark)
    if status:
        stmt = stmt.where(Task.status == status)
    if category:
        stmt = stmt.where(Task.category == category)
    if text:
        stmt = stmt.where(sa.func.lower(Task.query).contains(text.lower()))
    return stmt


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
    """Tasks in id order, filtered; keyset-paged with ``after_id`` so deep pages stay fast. Reads
    only the listed columns (not the source record) and counts per page in bounded chunks."""
    stmt = _task_filter(sa.select(*_SUMMARY_COLUMNS), benchmark, status, category, text)
    stmt = stmt.where(Task.id > after_id).order_by(Task.id)
    if limit:
        stmt = stmt.limit(limit)
    rows = session.execute(stmt).all()
    ids = [r[0] for r in rows]
    steps = _count_by_task(session, ReferenceStep.task_id, ids)
    cps = _count_by_task(session, Checkpoint.task_id, ids)
    imgs = _count_by_task(session, TaskAsset.task_id, ids, TaskAsset.role == "query_image")
    return [
        TaskSummary(
            id=tid,
            benchmark=bname,
            source_id=source_id,
            query=query,
            category=category_,
            level=level,
            status=status_,
            revision=revision,
            answer_kind=(spec or {}).get("kind", "none"),
            steps=steps.get(tid, 0),
            checkpoints=cps.get(tid, 0),
            images=imgs.get(tid, 0),
        )
        for tid, bname, source_id, query, category_, level, status_, revision, spec in rows
    ]


def iter_task_summaries(
    session: Session,
    benchmark: str | None = None,
    *,
    status: str | None = None,
    category: str | None = None,
    text: str | None = None,
    limit: int | None = None,
    page: int = 1000,
) -> Iterator[TaskSummary]:
    """``task_summaries`` a page at a time (keyset), so listing 100k tasks keeps memory flat."""
    after, left = 0, limit
    while left is None or left > 0:
        size = page if left is None else min(page, left)
        rows = task_summaries(
            session, benchmark, status=status, category=category, text=text, after_id=after, limit=size
        )
        yield from rows
        if len(rows) < size:
            return
        after = rows[-1].id
        left = None if left is None else left - len(rows)


def count_tasks(
    session: Session,
    benchmark: str | None = None,
    *,
    status: str | None = None,
    category: str | None = None,
    text: str | None = None,
) -> int:
    """How many tasks ``task_summaries`` would list with these filters and no limit."""
    stmt = _task_filter(sa.select(sa.func.count(Task.id)), benchmark, status, category, text)
    return int(session.execute(stmt).scalar_one())


def recent_runs(session: Session, limit: int = 10) -> list[dict[str, Any]]:
    stmt = (
        select(Run, Benchmark.name)
        .join(Benchmark, Benchmark.id == Run.benchmark_id)  # type: ignore[arg-type]
        .order_by(Run.id.desc())  # type: ignore[union-attr]
        .limit(limit)
    )
    return [
        {
            "id": r.id,
            "name": r.name,
            "benchmark": b,
            "mode": r.mode,
            "status": r.status,
            "created_at": r.created_at.isoformat() if r.created_at else None,
        }
        for r, b in session.exec(stmt).all()
    ]
