"""Read queries shaped for the TUI's screens, returning plain dataclasses.

Workers call these inside a short read-only session and post the results to the UI thread, so no
widget ever holds a live ORM row. The task list pages by position over an id index: one cheap
``SELECT id`` per filter change gives the row count and random access for the virtual list; rows
are then fetched a page at a time by keyset (``id >= first id of the page``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select, col

from annotation.tasks import STATUSES
from store.models import Asset as AssetRow
from store.models import (
    Annotator,
    Assignment,
    AuditEvent,
    Benchmark,
    Checkpoint,
    Document,
    OrderingConstraint,
    ReferenceStep,
    Task,
    TaskAsset,
)
from store.dialects import contains_ignoring_case, name_of
from store.queries import BenchmarkSummary, benchmark_summaries, recent_runs


@dataclass(frozen=True)
class TaskFilter:
    """What the task list shows; empty fields do not filter."""

    benchmark: str = ""
    category: str = ""
    level: str = ""
    status: str = ""
    assignee: str = ""
    text: str = ""

    def is_empty(self) -> bool:
        return not any((self.benchmark, self.category, self.level, self.status, self.assignee, self.text))


@dataclass(frozen=True)
class TaskRow:
    id: int
    benchmark: str
    source_id: str
    status: str
    level: str
    category: str
    revision: int
    query: str


@dataclass(frozen=True)
class AssignmentRow:
    id: int
    target_kind: str
    target_id: int
    scale: str
    status: str


@dataclass(frozen=True)
class HomeData:
    benchmarks: list[BenchmarkSummary]
    runs: list[dict[str, Any]]
    assignments: list[AssignmentRow]
    statuses: tuple[str, ...] = STATUSES


def home_data(session: Session, actor: str | None) -> HomeData:
    assignments: list[AssignmentRow] = []
    if actor:
        stmt = (
            select(Assignment)
            .join(Annotator, col(Annotator.id) == col(Assignment.annotator_id))
            .where(Annotator.name == actor, Assignment.status == "open")
            .order_by(col(Assignment.id))
            .limit(50)
        )
        assignments = [
            AssignmentRow(a.id or 0, a.target_kind, a.target_id, a.scale, a.status) for a in session.exec(stmt).all()
        ]
    return HomeData(benchmark_summaries(session), recent_runs(session, 10), assignments)


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _filtered(stmt: Any, flt: TaskFilter, dialect: str) -> Any:
    if flt.benchmark:
        bench_ids = select(Benchmark.id).where(Benchmark.name == flt.benchmark).scalar_subquery()
        stmt = stmt.where(Task.benchmark_id == bench_ids)
    if flt.category:
        stmt = stmt.where(Task.category == flt.category)
    if flt.level:
        stmt = stmt.where(Task.level == flt.level)
    if flt.status:
        stmt = stmt.where(Task.status == flt.status)
    if flt.assignee:
        assigned = (
            select(Assignment.target_id)
            .join(Annotator, col(Annotator.id) == col(Assignment.annotator_id))
            .where(Annotator.name == flt.assignee, Assignment.target_kind == "task")
        )
        stmt = stmt.where(Task.id.in_(assigned))  # type: ignore[union-attr]
    if flt.text:
        pattern = _like_pattern(flt.text)
        stmt = stmt.where(contains_ignoring_case(dialect, Task.query, pattern))
    return stmt


def task_ids(session: Session, flt: TaskFilter) -> list[int]:
    """Ids of all tasks matching the filter, in id order (the virtual list's index)."""
    dialect = name_of(session)
    stmt = _filtered(sa.select(Task.id), flt, dialect).order_by(Task.id)
    # Core, not ORM: 100k ints through the ORM cost several times the query itself.
    return list(session.connection().execute(stmt).scalars().all())


def task_rows(session: Session, flt: TaskFilter, first_id: int, limit: int) -> list[TaskRow]:
    """One page of the filtered list starting at ``first_id`` (keyset pagination)."""
    dialect = name_of(session)
    stmt = (
        _filtered(
            sa.select(
                Task.id,
                Task.benchmark_id,
                Task.source_id,
                Task.status,
                Task.level,
                Task.category,
                Task.revision,
                sa.func.substr(Task.query, 1, 200),
            ),
            flt,
            dialect,
        )
        .where(Task.id >= first_id)
        .order_by(Task.id)
        .limit(limit)
    )
    names = dict(session.exec(select(Benchmark.id, Benchmark.name)).all())
    return [
        TaskRow(i, names.get(b, "?"), s, st, lv or "", cat or "", rev, " ".join((q or "").split()))
        for i, b, s, st, lv, cat, rev, q in session.connection().execute(stmt).all()
    ]


def filter_choices(session: Session) -> dict[str, list[str]]:
    """Distinct values for the filter drop-downs."""

    def distinct(col: Any) -> list[str]:
        return [v for v in session.exec(select(col).where(col.is_not(None)).distinct().order_by(col)).all() if v]

    return {
        "benchmark": list(session.exec(select(Benchmark.name).order_by(Benchmark.name)).all()),
        "category": distinct(Task.category),
        "level": distinct(Task.level),
        "annotator": list(session.exec(select(Annotator.name).order_by(Annotator.name)).all()),
    }


# ------------------------------------------------------------------ one task, everything the editor shows


@dataclass(frozen=True)
class AssetRef:
    link_id: int
    asset_id: int
    sha256: str
    mime: str
    role: str
    ordinal: int
    step_id: int | None
    width: int | None
    height: int | None
    label: str


@dataclass(frozen=True)
class StepView:
    id: int
    ordinal: int
    thought: str
    tool_name: str | None
    tool_args: Any
    result_text: str
    is_final: bool
    final_answer: str | None
    artifact_asset_ids: list[int]


@dataclass(frozen=True)
class CheckpointView:
    id: int
    key: str
    axis: str
    step_id: int | None
    description: str
    tools: list[str]
    visual_check: Any
    search_check: Any
    answer_check: Any
    gt_asset_id: int | None
    weight: float
    code_check: Any = None


@dataclass(frozen=True)
class HistoryEntry:
    at: str
    actor: str
    entity: str
    action: str
    fields: list[str]
    audit_id: int = 0  # the audit event: "revert to here" goes back to just after it


@dataclass(frozen=True)
class TaskDetail:
    id: int
    benchmark: str
    benchmark_id: int
    source_format: str
    tool_set: str | None
    guidelines: str
    source_id: str
    query: str
    category: str
    intent: str
    level: str
    domain: str
    status: str
    revision: int
    answer_spec: dict[str, Any]
    reference_tool_calls: int | None
    max_tool_calls: int | None
    penalty_per_extra_call: float | None
    meta: dict[str, Any]
    images: list[AssetRef]
    artifacts: list[AssetRef]
    documents: list[tuple[str, str]]
    steps: list[StepView]
    checkpoints: list[CheckpointView]
    orderings: list[tuple[str, list[str], int | None]]
    history: list[HistoryEntry] = field(default_factory=list)
    changed_at: str = ""  # the task's updated_at: moves with every save, also within one revision
    tools_offered: list[str] = field(default_factory=list)  # empty: the model is offered the whole tool set

    def image_sequence(self) -> list[AssetRef]:
        """Images in the order a tool sees them: query images first, then artifacts by step."""
        return self.images + self.artifacts


def change_stamp(task: Any) -> str:
    """What an open screen compares to see another person's edit: the revision alone stays put while
    one editing session goes on (revisions count sessions), the time of the last save does not."""
    return f"{task.revision}@{task.updated_at.isoformat() if task.updated_at else ''}"


def task_detail(session: Session, task_id: int, *, with_history: bool = True) -> TaskDetail:
    from annotation.tasks import get_task  # the domain error for a missing task

    task = get_task(session, task_id)
    bench = session.get(Benchmark, task.benchmark_id)
    assert bench is not None
    steps = list(
        session.exec(
            select(ReferenceStep).where(ReferenceStep.task_id == task_id).order_by(col(ReferenceStep.ordinal))
        ).all()
    )
    step_ordinal = {s.id: s.ordinal for s in steps}
    links = session.exec(
        select(TaskAsset, AssetRow)
        .join(AssetRow, col(AssetRow.id) == col(TaskAsset.asset_id))
        .where(TaskAsset.task_id == task_id)
        .order_by(col(TaskAsset.ordinal), col(TaskAsset.id))
    ).all()
    images: list[AssetRef] = []
    artifacts: list[AssetRef] = []
    for link, asset in links:
        if link.role == "artifact":
            label = f"step {step_ordinal[link.step_id] + 1}" if link.step_id in step_ordinal else "artifact"
        else:
            label = link.role.replace("_", " ")
        ref = AssetRef(
            link.id or 0,
            asset.id or 0,
            asset.sha256,
            asset.mime,
            link.role,
            link.ordinal,
            link.step_id,
            asset.width,
            asset.height,
            label,
        )
        if link.role == "artifact":
            artifacts.append(ref)
        elif link.role == "query_image":
            images.append(ref)
    artifacts.sort(key=lambda a: (step_ordinal.get(a.step_id, 10**6), a.ordinal, a.link_id))
    by_step: dict[int, list[int]] = {}
    for a in artifacts:
        if a.step_id is not None:
            by_step.setdefault(a.step_id, []).append(a.asset_id)
    docs = [
        (d.title or f"document {d.ordinal + 1}", d.text)
        for d in session.exec(select(Document).where(Document.task_id == task_id).order_by(col(Document.ordinal))).all()
    ]
    cps = session.exec(
        select(Checkpoint).where(Checkpoint.task_id == task_id).order_by(col(Checkpoint.ordinal), col(Checkpoint.id))
    ).all()
    orders = session.exec(
        select(OrderingConstraint).where(OrderingConstraint.task_id == task_id).order_by(col(OrderingConstraint.id))
    ).all()
    return TaskDetail(
        id=task.id or 0,
        benchmark=bench.name,
        benchmark_id=bench.id or 0,
        source_format=bench.source_format,
        tool_set=bench.tool_set,
        guidelines=bench.guidelines or "",
        source_id=task.source_id,
        query=task.query,
        category=task.category or "",
        intent=task.intent or "",
        level=task.level or "",
        domain=task.domain or "",
        status=task.status,
        revision=task.revision,
        answer_spec=dict(task.answer_spec or {"kind": "none"}),
        reference_tool_calls=task.reference_tool_calls,
        max_tool_calls=task.max_tool_calls,
        penalty_per_extra_call=task.penalty_per_extra_call,
        meta=dict(task.meta or {}),
        images=images,
        artifacts=artifacts,
        documents=docs,
        changed_at=change_stamp(task),
        tools_offered=list(task.tools_offered or []),
        steps=[
            StepView(
                s.id or 0,
                s.ordinal,
                s.thought or "",
                s.tool_name,
                s.tool_args,
                s.result_text or "",
                s.is_final,
                s.final_answer,
                by_step.get(s.id or 0, []),
            )
            for s in steps
        ],
        checkpoints=[
            CheckpointView(
                c.id or 0,
                c.key,
                c.axis,
                c.step_id,
                c.description or "",
                list(c.tools or []),
                c.visual_check,
                c.search_check,
                c.answer_check,
                c.gt_asset_id,
                c.weight,
                c.code_check,
            )
            for c in cps
        ],
        orderings=[(o.key, list(o.sequence or []), o.max_gap) for o in orders],
        history=task_history(session, task_id) if with_history else [],
    )


PART_NAMES = {
    "referencestep": "step",
    "checkpoint": "checkpoint",
    "taskasset": "image",
    "orderingconstraint": "ordering",
}
"""Audited rows that belong to a task, as the history names them."""


def task_history(session: Session, task_id: int, limit: int = 200) -> list[HistoryEntry]:
    """Audit events of the task and of its steps, checkpoints, orderings and images, newest first,
    with the fields each update changed (a part's action is named: "update step")."""
    own = session.exec(
        select(AuditEvent)
        .where(AuditEvent.entity == "task", AuditEvent.entity_id == task_id)
        .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
        .limit(limit)
    ).all()
    # Parts carry their task id inside the row snapshot; recent part events are scanned for it.
    parts = session.exec(
        select(AuditEvent)
        .where(AuditEvent.entity.in_(list(PART_NAMES)))  # type: ignore[attr-defined]
        .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
        .limit(limit * 10)
    ).all()
    mine = [e for e in parts if ((e.after or e.before or {}).get("task_id")) == task_id]
    events = sorted([*own, *mine], key=lambda e: e.id or 0, reverse=True)[:limit]
    out = []
    for e in events:
        before, after = e.before or {}, e.after or {}
        changed = sorted(
            k for k in set(before) | set(after) if before.get(k) != after.get(k) and k not in ("updated_at", "revision")
        )
        action = e.action if e.entity == "task" else f"{e.action} {PART_NAMES[e.entity]}"
        out.append(
            HistoryEntry(
                e.created_at.isoformat()[:19] if e.created_at else "",
                e.actor or "",
                e.entity,
                action,
                changed if e.action == "update" else [],
                int(e.id or 0),
            )
        )
    return out
