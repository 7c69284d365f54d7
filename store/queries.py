"""Read queries that return plain dataclasses, so callers (CLI, TUI workers) never hold live ORM rows.

Written as plain SQL text (``store.sql``): they run on a ``sqlite3`` connection (the command line on
SQLite, ``store.sqlite_read``: no SQLAlchemy imported), a SQLAlchemy connection (PostgreSQL) or an
ORM session (the TUI), one text for all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, TypeAlias

from store.sql import chunks, in_list, json_value, rows, scalar, timestamp

Reader: TypeAlias = Any  # a sqlite3.Connection, or a SQLAlchemy Connection or Session (store.sql.rows)


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
    grouped = "SELECT task.benchmark_id, task.status, count(*) FROM task GROUP BY task.benchmark_id, task.status"
    for bench_id, status, n in rows(session, grouped):
        counts.setdefault(bench_id, {})[status] = n
    out = []
    listed = "SELECT benchmark.id, benchmark.name, benchmark.source_format, benchmark.tool_set FROM benchmark"
    for bid, name, source_format, tool_set in list(rows(session, listed + " ORDER BY benchmark.name")):
        by_status = counts.get(bid or 0, {})
        out.append(
            BenchmarkSummary(
                bid or 0, name, source_format, tool_set, sum(by_status.values()), dict(sorted(by_status.items()))
            )
        )
    return out


def benchmark_names(session: Reader) -> list[str]:
    return [name for (name,) in rows(session, "SELECT benchmark.name FROM benchmark")]


def require_benchmark(session: Reader, name: str) -> int:
    """The id of the benchmark called ``name``; a LookupError that lists the known ones if none is."""
    found = scalar(session, "SELECT benchmark.id FROM benchmark WHERE benchmark.name = :name", {"name": name})
    if found is None:
        raise LookupError(unknown_benchmark(name, benchmark_names(session)))
    return int(found)


def unknown_benchmark(name: str, known: list[str]) -> str:
    return f"no benchmark named {name!r} (known: {', '.join(known) or 'none yet'})"


def _count_by_task(session: Reader, table: str, task_ids: list[int], where: str = "") -> dict[int, int]:
    """Counts per task id in ``table``, asked in chunks so no ``IN (...)`` grows past the parameter limit."""
    out: dict[int, int] = {}
    for chunk in chunks(task_ids):
        ids, params = in_list("task_id", chunk)
        sql = f"SELECT {table}.task_id, count(*) FROM {table} WHERE {table}.task_id IN {ids}{where} GROUP BY {table}.task_id"
        out.update({tid: n for tid, n in rows(session, sql, params)})
    return out


_SUMMARY_COLUMNS = (
    'task.id, benchmark.name, task.source_id, task."query", task.category, task.level, task.status, '
    "task.revision, CAST(task.answer_spec AS TEXT)"
)


def _task_filter(
    select: str, benchmark: str | None, status: str | None, category: str | None, text: str | None
) -> tuple[str, dict[str, Any]]:
    """``SELECT … FROM task JOIN benchmark`` with the filters given: the text and its parameters."""
    given = {"benchmark": benchmark, "status": status, "category": category, "text": text and text.lower()}
    params = {k: v for k, v in given.items() if v}
    where = " AND ".join(_FILTERS[k] for k in params)
    return (
        f"SELECT {select} FROM task JOIN benchmark ON benchmark.id = task.benchmark_id WHERE {where or '1 = 1'}",
        params,
    )


_FILTERS = {
    "benchmark": "benchmark.name = :benchmark",
    "status": "task.status = :status",
    "category": "task.category = :category",
    "text": """lower(task."query") LIKE '%' || :text || '%'""",  # as ``contains`` was: % and _ are wildcards
}


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
    sql, params = _task_filter(_SUMMARY_COLUMNS, benchmark, status, category, text)
    sql, params["after_id"] = sql + " AND task.id > :after_id ORDER BY task.id", after_id
    if limit:
        sql, params["limit"] = sql + " LIMIT :limit", limit
    found = list(rows(session, sql, params))
    ids = [r[0] for r in found]
    steps = _count_by_task(session, "referencestep", ids)
    cps = _count_by_task(session, "checkpoint", ids)
    imgs = _count_by_task(session, "taskasset", ids, " AND taskasset.role = 'query_image'")
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
            answer_kind=(json_value(spec) or {}).get("kind", "none"),
            steps=steps.get(tid, 0),
            checkpoints=cps.get(tid, 0),
            images=imgs.get(tid, 0),
        )
        for tid, bname, source_id, query, category_, level, status_, revision, spec in found
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
    sql, params = _task_filter("count(task.id)", benchmark, status, category, text)
    return int(scalar(session, sql, params))


def recent_runs(session: Reader, limit: int = 10) -> list[dict[str, Any]]:
    sql = (
        "SELECT run.id, run.name, benchmark.name, run.mode, run.status, run.created_at "
        "FROM run JOIN benchmark ON benchmark.id = run.benchmark_id ORDER BY run.id DESC LIMIT :limit"
    )
    out = []
    for rid, name, b, mode, status, created in rows(session, sql, {"limit": limit}):
        created_at = timestamp(created)
        out.append(
            {
                "id": rid,
                "name": name,
                "benchmark": b,
                "mode": mode,
                "status": status,
                "created_at": created_at.isoformat() if created_at else None,
            }
        )
    return out
