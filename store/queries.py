"""Read queries that return plain dataclasses, so callers (CLI, TUI workers) never hold live ORM rows.

Written in SQLAlchemy Core over ``store.columns``: they run on an ORM session (the TUI) or a plain
connection (``store.read_scope``, the command line), and never need the SQLModel classes built.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import sqlalchemy as sa

from store import columns as tables

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Session

Reader: TypeAlias = "Session | Connection"


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


def benchmark_summaries(session: Reader) -> list[BenchmarkSummary]:
    counts: dict[int, dict[str, int]] = {}
    rows = session.execute(
        sa.select(tables.task.c.benchmark_id, tables.task.c.status, sa.func.count()).group_by(
            tables.task.c.benchmark_id, tables.task.c.status
        )
    ).all()
    for bench_id, status, n in rows:
        counts.setdefault(bench_id, {})[status] = n
    out = []
    b = tables.benchmark.c
    for bid, name, source_format, tool_set in session.execute(
        sa.select(b.id, b.name, b.source_format, b.tool_set).order_by(b.name)
    ).all():
        by_status = counts.get(bid or 0, {})
        out.append(
            BenchmarkSummary(
                bid or 0, name, source_format, tool_set, sum(by_status.values()), dict(sorted(by_status.items()))
            )
        )
    return out


def benchmark_names(session: Reader) -> list[str]:
    return list(session.execute(sa.select(tables.benchmark.c.name)).scalars())


def require_benchmark(session: Reader, name: str) -> int:
    """The id of the benchmark called ``name``; a LookupError that lists the known ones if none is."""
    found = session.execute(sa.select(tables.benchmark.c.id).where(tables.benchmark.c.name == name)).scalar()
    if found is None:
        raise LookupError(unknown_benchmark(name, benchmark_names(session)))
    return int(found)


def unknown_benchmark(name: str, known: list[str]) -> str:
    return f"no benchmark named {name!r} (known: {', '.join(known) or 'none yet'})"


IN_CHUNK = 900  # ids per ``IN (...)``: far under every SQLite build's parameter limit (999 on old ones)


def _count_by_task(session: Reader, column: Any, task_ids: list[int], *where: Any) -> dict[int, int]:
    """Counts per task id, asked in chunks so no ``IN (...)`` grows past the parameter limit."""
    out: dict[int, int] = {}
    for i in range(0, len(task_ids), IN_CHUNK):
        stmt = sa.select(column, sa.func.count()).where(column.in_(task_ids[i : i + IN_CHUNK]), *where).group_by(column)
        out.update({tid: n for tid, n in session.execute(stmt).all()})
    return out


_SUMMARY_COLUMNS = (
    tables.task.c.id,
    tables.benchmark.c.name,
    tables.task.c.source_id,
    tables.task.c.query,
    tables.task.c.category,
    tables.task.c.level,
    tables.task.c.status,
    tables.task.c.revision,
    tables.task.c.answer_spec,
)


def _task_filter(stmt: Any, benchmark: str | None, status: str | None, category: str | None, text: str | None) -> Any:
    t = tables.task.c
    stmt = stmt.join(tables.benchmark, tables.benchmark.c.id == t.benchmark_id)
    if benchmark:
        stmt = stmt.where(tables.benchmark.c.name == benchmark)
    if status:
        stmt = stmt.where(t.status == status)
    if category:
        stmt = stmt.where(t.category == category)
    if text:
        stmt = stmt.where(sa.func.lower(t.query).contains(text.lower()))
    return stmt


def task_summaries(
    session: Reader,
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
    stmt = stmt.where(tables.task.c.id > after_id).order_by(tables.task.c.id)
    if limit:
        stmt = stmt.limit(limit)
    rows = session.execute(stmt).all()
    ids = [r[0] for r in rows]
    steps = _count_by_task(session, tables.referencestep.c.task_id, ids)
    cps = _count_by_task(session, tables.checkpoint.c.task_id, ids)
    imgs = _count_by_task(session, tables.taskasset.c.task_id, ids, tables.taskasset.c.role == "query_image")
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
    session: Reader,
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
    session: Reader,
    benchmark: str | None = None,
    *,
    status: str | None = None,
    category: str | None = None,
    text: str | None = None,
) -> int:
    """How many tasks ``task_summaries`` would list with these filters and no limit."""
    stmt = _task_filter(sa.select(sa.func.count(tables.task.c.id)), benchmark, status, category, text)
    return int(session.execute(stmt).scalar_one())


def recent_runs(session: Reader, limit: int = 10) -> list[dict[str, Any]]:
    r = tables.run.c
    stmt = (
        sa.select(r.id, r.name, tables.benchmark.c.name, r.mode, r.status, r.created_at)
        .join(tables.benchmark, tables.benchmark.c.id == r.benchmark_id)
        .order_by(r.id.desc())
        .limit(limit)
    )
    return [
        {
            "id": rid,
            "name": name,
            "benchmark": b,
            "mode": mode,
            "status": status,
            "created_at": created_at.isoformat() if created_at else None,
        }
        for rid, name, b, mode, status, created_at in session.execute(stmt).all()
    ]
