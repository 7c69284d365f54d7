"""Putting parsed tasks into the store and reading them back out, the same way for every format.

Import runs inside the caller's single transaction. The benchmark, the look-up of existing tasks and
new tasks go through SQLAlchemy Core over ``store.core_tables`` (new rows as bulk inserts, with their
audit rows written alongside: bulk inserts bypass the ORM flush hook). Tasks that already exist are
matched by source id and, when changed, updated through the ORM so the audit hook records
before/after: the ORM and the tables are loaded only then (an import that only creates, or finds its
tasks unchanged, never builds them: a third of a second of the command's start-up). A task whose
parsed content has not changed since the last import is left alone, local edits included.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
import itertools
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from annotation.formats import read_ahead
from annotation.formats.assets import AssetCache
from annotation.formats.base import DatasetSpec, DatasetStream, RubricLine, TaskBundle, TaskSpec, gc_paused
from annotation.formats.bulk import CHUNK, JsonText, audit_stage, copy_audit_stage, insert_audited, insert_many
from annotation.formats.errors import FormatError
from annotation.formats.fingerprint import fingerprint
from store import core_tables as ct
from store.blobs import BlobStore
from store.clock import utcnow
from store.core_tables import Reader, connection_of
from store.rubrics import RubricError, restore_version

if TYPE_CHECKING:
    from sqlmodel import Session

TASK_FIELDS = (
    "query",
    "category",
    "subcategory",
    "intent",
    "level",
    "domain",
    "answer_spec",
    "output_format",
    "tools_offered",
    "reference_tool_calls",
    "max_tool_calls",
    "penalty_per_extra_call",
    "meta",
)


@dataclass
class ImportSummary:
    format: str
    benchmark: str
    source: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    steps: int = 0
    checkpoints: int = 0
    documents: int = 0
    assets: int = 0
    rubrics: int = 0  # judge rubric versions added (chainmark's own folder carries them)
    notes: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        return self.created + self.updated + self.unchanged

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tasks": self.tasks}


def _check_spec(spec: TaskSpec, source: str) -> None:
    from annotation.answers import AnswerSpecError, validate_answer_spec  # pydantic: after the first statement

    try:
        validate_answer_spec(spec.fields.get("answer_spec") or {"kind": "none"})
    except AnswerSpecError as exc:
        raise FormatError(source, spec.source_id, f"answer ({exc.field})", str(exc)) from None
    if not str(spec.fields.get("query") or "").strip():
        raise FormatError(source, spec.source_id, "query", "the task has no query text")
    keys = [c.key for c in spec.checkpoints]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise FormatError(source, spec.source_id, "checkpoints.id", f"duplicate checkpoint id(s): {', '.join(dupes)}")
    for o in spec.orderings:
        missing = [k for k in o.sequence if k not in keys]
        if missing and not o.as_read:
            raise FormatError(
                source,
                spec.source_id,
                f"ordering_constraints[{o.key}].sequence",
                f"names unknown checkpoint(s): {', '.join(missing)}",
            )
    if len(spec.source_id) > 200:
        raise FormatError(source, spec.source_id[:40] + "…", "id", "source id longer than 200 characters")


def _task_row(
    spec: TaskSpec, benchmark_id: int, actor: str, now: datetime, meta: dict[str, Any], record: Any
) -> dict[str, Any]:
    f = spec.fields
    return {
        "benchmark_id": benchmark_id,
        "source_id": spec.source_id,
        "query": f["query"],
        "category": f.get("category"),
        "subcategory": f.get("subcategory"),
        "intent": f.get("intent"),
        "level": f.get("level"),
        "domain": f.get("domain"),
        "answer_spec": f.get("answer_spec") or {"kind": "none"},
        "output_format": f.get("output_format"),
        "status": "draft",
        "revision": 1,
        "edit_session": None,
        "author": actor,
        "tools_offered": list(f.get("tools_offered") or []),
        "reference_tool_calls": f.get("reference_tool_calls"),
        "max_tool_calls": f.get("max_tool_calls"),
        "penalty_per_extra_call": f.get("penalty_per_extra_call"),
        "meta": meta,
        "source_record": record,
        "created_at": now,
        "updated_at": now,
    }


def _step_rows(spec: TaskSpec, task_id: int, actor: str, now: datetime) -> list[dict[str, Any]]:
    return [
        {
            "task_id": task_id,
            "ordinal": i,
            "thought": s.thought,
            "tool_name": s.tool_name,
            "tool_args": s.tool_args,
            "result_text": s.result_text,
            "result": s.result,
            "is_final": s.final_answer is not None,
            "final_answer": s.final_answer,
            "recorded_by": actor,
            "recorded_at": now,
            "meta": s.meta,
        }
        for i, s in enumerate(spec.steps)
    ]


def _checkpoint_rows(spec: TaskSpec, task_id: int, actor: str, now: datetime) -> list[dict[str, Any]]:
    return [
        {
            "task_id": task_id,
            "step_id": None,
            "parent_id": None,
            "key": c.key,
            "ordinal": i,
            "axis": c.axis,
            "description": c.description,
            "tools": list(c.tools),
            "code_check": c.code_check,
            "visual_check": c.visual_check,
            "gt_asset_id": None,
            "search_check": c.search_check,
            "answer_check": c.answer_check,
            "weight": c.weight,
            "meta": c.meta,
        }
        for i, c in enumerate(spec.checkpoints)
    ]


def _link_checkpoints(
    rows: list[dict[str, Any]], spec: TaskSpec, step_ids: list[int], cache: AssetCache
) -> list[dict[str, Any]]:
    """The checkpoint rows pointed at the steps they check and their ground-truth images, once the
    steps and assets have ids."""
    for row, c in zip(rows, spec.checkpoints):
        if c.step_index is not None:
            row["step_id"] = step_ids[c.step_index]
        if c.gt_asset_index is not None:
            row["gt_asset_id"] = cache.id_of_hash(spec.assets[c.gt_asset_index].sha256)
    return rows


def _ordering_rows(spec: TaskSpec, task_id: int, actor: str, now: datetime) -> list[dict[str, Any]]:
    return [
        {"task_id": task_id, "key": o.key, "sequence": list(o.sequence), "max_gap": o.max_gap} for o in spec.orderings
    ]


def _document_rows(spec: TaskSpec, task_id: int, actor: str, now: datetime) -> list[dict[str, Any]]:
    return [
        {"task_id": task_id, "ordinal": i, "title": d.title, "text": d.text, "meta": d.meta}
        for i, d in enumerate(spec.documents)
    ]


_CHILD_ROWS: dict[str, Callable[[TaskSpec, int, str, datetime], list[dict[str, Any]]]] = {
    "steps": _step_rows,
    "checkpoints": _checkpoint_rows,
    "orderings": _ordering_rows,
    "documents": _document_rows,
}


def _child_rows(spec: TaskSpec, task_id: int, actor: str, now: datetime) -> dict[str, list[dict[str, Any]]]:
    return {kind: build(spec, task_id, actor, now) for kind, build in _CHILD_ROWS.items()}


BATCH = 5000  # new tasks per round of inserts: bounds the rows, driver tuples and audit texts alive at once


def _batches(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(items), BATCH):
        yield items[i : i + BATCH]


def _asset_rows(
    spec: TaskSpec, task_id: int, cache: AssetCache, step_ids: list[int], doc_ids: list[int]
) -> list[dict[str, Any]]:
    rows = []
    per_role: dict[str, int] = defaultdict(int)
    for a in spec.assets:
        ordinal = per_role[a.role]
        per_role[a.role] += 1
        rows.append(
            {
                "task_id": task_id,
                "asset_id": cache.id_of_hash(a.sha256),
                "role": a.role,
                "ordinal": ordinal,
                "document_id": doc_ids[a.document_index] if a.document_index is not None else None,
                "step_id": step_ids[a.step_index] if a.step_index is not None else None,
                "original_path": a.original_path,
                "url": a.url,
            }
        )
    return rows


def write_dataset(
    reader: Reader,
    blobs: BlobStore,
    fmt: Any,
    spec: DatasetSpec | DatasetStream,
    benchmark: str | None,
    source: str,
    *,
    consume: bool = False,
    actor: str | None = None,
) -> ImportSummary:
    """Upsert every task of ``spec`` into the benchmark, inside the caller's transaction: on a plain
    connection (the command line's; ``actor`` names who imports) or an ORM session (its actor).

    A ``DatasetSpec`` is checked whole before anything is written. A ``DatasetStream`` is parsed,
    checked and written batch by batch (a bad record stops it; the caller's rollback undoes the
    batches before). Rows, ids and audit events come out the same either way.

    ``consume``: the caller is done with ``spec``; each new task's source record is dropped once its
    row is written (a 100k-task import otherwise keeps every parsed record alive to the end)."""
    name = benchmark or fmt.default_benchmark
    orm = _Orm(reader, actor)
    with gc_paused():
        whole = isinstance(spec, DatasetSpec)
        if whole:
            _check_dataset(spec.tasks, source)
        bench_id = _prepare_benchmark(orm.conn, fmt, spec, name, source)
        summary = ImportSummary(fmt.name, name, source)
        # New files are written while the rows go in; leaving the block waits for them (before any commit).
        with orm, AssetCache(orm.conn, blobs, background=True) as cache, _read(spec, source) as (tasks, checked):
            parts = _checked_batches(tasks, source, cache, summary, checked=whole or checked)
            _upsert_tasks(orm, fmt, parts, bench_id, cache, summary, source, consume)
        if isinstance(spec, DatasetSpec):
            summary.rubrics = _restore_rubrics(orm.conn, name, spec.rubrics)
        summary.notes = list(spec.notes)
        return summary


class _Orm:
    """The import's connection, and the ORM session changed tasks are updated through (so the audit
    hook, ``store.audit``, records their before/after): the caller's session, or one opened on the
    caller's connection when the first changed task comes. Use it as a context manager around the
    writes: leaving it flushes that session and runs its commit hooks (``store.changes``: PostgreSQL's
    change notice, sent when the caller commits) without ending the caller's transaction."""

    def __init__(self, reader: Reader, actor: str | None):
        self.given = None if isinstance(reader, Connection) else reader
        if self.given is not None:
            self.given.flush()  # what the caller has pending, seen by the Core statements below
        self.conn = connection_of(reader)
        self.actor = str(actor or (self.given.info.get("actor") if self.given is not None else None) or "system")
        self.made: Session | None = None

    @property
    def session(self) -> Session:
        if self.given is not None:
            return cast("Session", self.given)  # the callers' sessions are SQLModel's
        if self.made is None:
            from sqlmodel import Session

            import store.models  # noqa: F401  (the tables, and the audit hooks they register)

            # Joins the connection's transaction: its commit flushes and runs the hooks, never commits.
            self.made = Session(bind=self.conn, expire_on_commit=False)
            self.made.info["actor"] = self.actor
        return self.made

    def __enter__(self) -> _Orm:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        made, self.made = self.made, None
        if made is None:
            return
        try:
            if exc_type is None:
                made.commit()
        finally:
            made.close()


def _check_dataset(tasks: Iterable[TaskSpec], source: str, seen: dict[str, int] | None = None) -> None:
    """Every task's own checks, and source ids unique (``seen``: ids and positions of earlier batches)."""
    seen = {} if seen is None else seen
    for t in tasks:
        _check_spec(t, source)
        if t.source_id in seen:
            raise FormatError(
                source,
                t.source_id,
                "id",
                f"source id appears twice (records {seen[t.source_id] + 1} and {len(seen) + 1})",
            )
        seen[t.source_id] = len(seen)


@contextmanager
def _read(spec: DatasetSpec | DatasetStream, source: str) -> Iterator[tuple[Iterable[TaskSpec], bool]]:
    """``(tasks, checked)``: a big stream is parsed, checked and fingerprinted in a child process while
    this one writes (``read_ahead``); anything else is read here, and checked by the caller."""
    if isinstance(spec, DatasetStream) and read_ahead.may_fork(spec.size):
        try:
            reader = read_ahead.ReadAhead(spec.tasks, spec.notes, _Prepare(source))
        except OSError:  # no process to spare (memory, limits): read it here instead
            pass
        else:
            with reader:
                yield reader, True
            return
    yield spec.tasks, False


class _Prepare:
    """What the read-ahead child does to each task before sending it: the checks ``_check_dataset``
    makes, and the fingerprint (its text is then not needed apart)."""

    def __init__(self, source: str):
        self.source = source
        self.seen: dict[str, int] = {}

    def __call__(self, t: TaskSpec) -> None:
        _check_dataset((t,), self.source, self.seen)
        t.fingerprint = _fingerprint(t, self.source)
        t.record_text = None
        if type(t.fingerprint[1]) is JsonText:  # the record travels as that text (see _record)
            t.record = None


def _checked_batches(
    tasks: Iterable[TaskSpec], source: str, cache: AssetCache, summary: ImportSummary, *, checked: bool
) -> Iterator[list[TaskSpec]]:
    """The tasks BATCH at a time, each batch checked (unless ``checked`` already) and its files stored."""
    seen: dict[str, int] = {}
    it = iter(tasks)
    while part := list(itertools.islice(it, BATCH)):
        if not checked:
            _check_dataset(part, source, seen)
        summary.assets += cache.ensure_hashed((a.sha256, a.data) for t in part for a in t.assets)
        yield part


def _unpaired_surrogate(value: Any, path: str = "") -> str | None:
    """The path of the first string in ``value`` that UTF-8 cannot encode (a lone surrogate)."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return path or "(record)"
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _unpaired_surrogate(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}".lstrip("."))
        if found:
            return found
    return None


def _described_by(settings: dict[str, Any]) -> dict[str, Any]:
    """A new benchmark's tool set, description and guidelines, from what the dataset says about itself
    (chainmark's own folder carries them in ``benchmark.json``)."""
    return {
        k: settings.get(k) if isinstance(settings.get(k), str) else None
        for k in ("tool_set", "description", "guidelines")
    }


def _prepare_benchmark(conn: Connection, fmt: Any, spec: DatasetSpec | DatasetStream, name: str, source: str) -> int:
    """The benchmark's id, made if needed, its format, tool set and this format's settings brought up
    to date (what ``annotation.tasks.ensure_benchmark`` does, in Core; a benchmark is not audited)."""
    b = ct.benchmark
    found = conn.execute(sa.select(b.c.id, b.c.source_format, b.c.settings).where(b.c.name == name)).first()
    if found is not None and found.source_format not in (fmt.source_format, "chainmark"):
        raise FormatError(
            source,
            None,
            None,
            f"benchmark {name!r} holds {found.source_format} tasks; "
            f"import {fmt.name} data into another benchmark (--benchmark)",
        )
    settings = dict((found.settings if found is not None else None) or {})
    settings[fmt.name] = {**(settings.get(fmt.name) or {}), **spec.settings}
    values: dict[str, Any] = {"settings": settings}
    values["source_format"] = fmt.source_format or (found.source_format if found is not None else None)
    if fmt.tool_set is not None:
        values["tool_set"] = fmt.tool_set
    if found is not None:
        conn.execute(b.update().where(b.c.id == found.id).values(**values))
        return int(found.id)
    row = {"name": name, **_described_by(spec.settings), "created_at": utcnow(), **values}
    conn.execute(b.insert().values(**row))
    return int(conn.execute(sa.select(b.c.id).where(b.c.name == name)).scalar_one())


def _restore_rubrics(conn: Connection, name: str, lines: list[RubricLine]) -> int:
    """Bring the dataset's rubric versions into benchmark ``name``; how many were new. A version it
    cannot take (another text under that number) is a FormatError naming its line: the import rolls back."""
    added = 0
    for line in lines:
        try:
            added += restore_version(conn, name, line.rubric)
        except RubricError as exc:
            raise FormatError(line.file, line.record, "version", str(exc)) from None
    return added


def _upsert_tasks(
    orm: _Orm,
    fmt: Any,
    parts: Iterator[list[TaskSpec]],
    bench_id: int,
    cache: AssetCache,
    summary: ImportSummary,
    source: str,
    consume: bool = False,
) -> None:
    """Changed tasks are updated through the ORM; new ones go in as bulk inserts with their audit rows.

    Every update is made before the first new task goes in (as ids and audit events always came out),
    so when the benchmark already has tasks the new ones wait in memory until the input is read; into
    an empty benchmark each batch is written as soon as it is parsed.
    """
    actor, conn = orm.actor, orm.conn
    now = utcnow()
    t = ct.task
    existing = {
        sid: (tid, rev, meta)
        for tid, sid, rev, meta in conn.execute(
            sa.select(t.c.id, t.c.source_id, t.c.revision, t.c.meta).where(t.c.benchmark_id == bench_id)
        )
    }
    inserter = _NewTasks(conn, fmt, bench_id, cache, summary, source, actor, now, consume)
    if not existing:
        for part in parts:
            inserter.insert(part)
    else:
        new_specs: list[TaskSpec] = []  # fingerprinted batch by batch: their record texts are not all kept at once
        changed: list[tuple[TaskSpec, str]] = []
        for part in parts:
            for spec in part:
                if spec.source_id not in existing:
                    new_specs.append(spec)
                    continue
                fp, _ = _fingerprint(spec, source)
                meta = existing[spec.source_id][2]
                if ((meta or {}).get("import") or {}).get("fingerprint") == fp:
                    summary.unchanged += 1
                else:
                    changed.append((spec, fp))
        for spec, fp in changed:
            _update_task(orm.session, existing[spec.source_id][0], spec, fp, fmt.name, cache, now)
            summary.updated += 1
            _count(summary, spec)
        del changed
        for part in _batches(new_specs):
            inserter.insert(part)
    inserter.finish()
    if orm.given is not None:
        orm.given.flush()


class _NewTasks:
    """Bulk inserts of new tasks, batch after batch, giving the ids and audit events one batch would.

    In each batch the tasks, then their steps, checkpoints, orderings, documents and file links go in,
    so every table's ids follow the input order. Audit events are one table: the tasks' go straight
    in, the children's wait in a temporary table per kind and are copied over at the end, kind by
    kind (every task's event, then every step's, …), as a single batch writes them.
    """

    KINDS = (
        ("steps", ct.referencestep),
        ("checkpoints", ct.checkpoint),
        ("orderings", ct.orderingconstraint),
        ("documents", ct.document),
    )

    def __init__(
        self,
        conn: Connection,
        fmt: Any,
        bench_id: int,
        cache: AssetCache,
        summary: ImportSummary,
        source: str,
        actor: str,
        now: datetime,
        consume: bool,
    ):
        self.conn, self.fmt, self.bench_id, self.cache = conn, fmt, bench_id, cache
        self.summary, self.source, self.actor, self.now, self.consume = summary, source, actor, now, consume
        self.staged: dict[str, sa.Table] = {}

    def insert(self, part: list[TaskSpec]) -> None:
        rows = []
        for t in part:
            fp, record = _fingerprint(t, self.source)
            meta = {
                **(t.fields.get("meta") or {}),
                "import": {"format": self.fmt.name, "fingerprint": fp, "revision": 1},
            }
            rows.append(_task_row(t, self.bench_id, self.actor, self.now, meta, record))
        task_ids = insert_audited(self.conn, ct.task, rows, "task", self.actor, self.now)
        del rows
        if self.consume:  # the verbatim record is on its row now; nothing below reads it
            for t in part:
                t.record = None
                t.record_text = None
        per_task: dict[str, list[list[int]]] = {"steps": [], "documents": []}
        for kind, table in self.KINDS:
            build = _CHILD_ROWS[kind]
            krows: list[dict[str, Any]] = []
            sizes = []
            for n, (t, tid) in enumerate(zip(part, task_ids)):
                made = build(t, tid, self.actor, self.now)
                if kind == "checkpoints":
                    made = _link_checkpoints(made, t, per_task["steps"][n], self.cache)
                krows.extend(made)
                sizes.append(len(made))
            if not krows:
                if kind in per_task:
                    per_task[kind].extend([] for _ in part)
                continue
            ids = insert_audited(
                self.conn, table, krows, table.name, self.actor, self.now, audit_table=self._stage(kind)
            )
            del krows
            if kind in per_task:
                pos = 0
                for size in sizes:
                    per_task[kind].append(ids[pos : pos + size])
                    pos += size
        asset_rows = []
        for n, (t, tid) in enumerate(zip(part, task_ids)):
            _count(self.summary, t)
            asset_rows.extend(_asset_rows(t, tid, self.cache, per_task["steps"][n], per_task["documents"][n]))
        insert_many(self.conn, ct.taskasset, asset_rows)
        self.summary.created += len(task_ids)

    def _stage(self, kind: str) -> sa.Table:
        table = self.staged.get(kind)
        if table is None:
            table = self.staged[kind] = audit_stage(self.conn, f"import_audit_{kind}")
        return table

    def finish(self) -> None:
        """Copy the children's audit events over, kind by kind in staging order; drop the stages."""
        for kind, _ in self.KINDS:
            table = self.staged.pop(kind, None)
            if table is not None:
                copy_audit_stage(self.conn, table)


def _fingerprint(t: TaskSpec, source: str) -> tuple[str, Any]:
    if t.fingerprint is not None:  # worked out by the read-ahead child
        return t.fingerprint
    try:
        return fingerprint(t)
    except UnicodeEncodeError:  # JSON may spell "\ud800" alone; UTF-8 (and so the database) cannot hold it
        where = _unpaired_surrogate(t.record) or "(derived fields)"
        raise FormatError(
            source, t.source_id, where, "text holds an unpaired UTF-16 surrogate, which cannot be stored"
        ) from None


def _record(t: TaskSpec) -> Any:
    """The source record; from the read-ahead child it may come as its JSON text only."""
    if t.record is None and t.fingerprint is not None and type(t.fingerprint[1]) is JsonText:
        return t.fingerprint[1].value
    return t.record


def _count(summary: ImportSummary, t: TaskSpec) -> None:
    summary.steps += len(t.steps)
    summary.checkpoints += len(t.checkpoints)
    summary.documents += len(t.documents)


def _update_task(
    session: Session, task_id: int, t: TaskSpec, fp: str, fmt_name: str, cache: AssetCache, now: datetime
) -> None:
    """Replace an existing task's content with the re-imported one (audited through the ORM)."""
    from sqlmodel import select

    from store.models import Checkpoint, CheckpointResult, Document, OrderingConstraint, ReferenceStep, Task, TaskAsset

    task = session.get(Task, task_id)
    assert task is not None
    for key in TASK_FIELDS:
        if key == "meta":
            continue
        value = t.fields.get(key)
        if key == "answer_spec":
            value = value or {"kind": "none"}
        if key == "tools_offered":
            value = list(value or [])
        setattr(task, key, value)
    task.source_record = _record(t)
    task.revision = (task.revision or 0) + 1
    task.updated_at = now
    task.meta = {
        **(t.fields.get("meta") or {}),
        "import": {"format": fmt_name, "fingerprint": fp, "revision": task.revision},
    }

    for link in session.exec(select(TaskAsset).where(TaskAsset.task_id == task_id)).all():
        session.delete(link)
    old_cps = {c.key: c for c in session.exec(select(Checkpoint).where(Checkpoint.task_id == task_id)).all()}
    for c in old_cps.values():
        c.step_id = None
    for o in session.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == task_id)).all():
        session.delete(o)
    session.flush()
    for s in session.exec(select(ReferenceStep).where(ReferenceStep.task_id == task_id)).all():
        session.delete(s)
    for d in session.exec(select(Document).where(Document.task_id == task_id)).all():
        session.delete(d)
    gone = [c for k, c in old_cps.items() if k not in {n.key for n in t.checkpoints}]
    for c in gone:
        scored = session.exec(
            select(sa.func.count()).select_from(CheckpointResult).where(CheckpointResult.checkpoint_id == c.id)
        ).one()
        if scored:
            raise FormatError(
                fmt_name,
                t.source_id,
                f"checkpoints.{c.key}",
                f"the new data drops checkpoint {c.key!r}, which has {scored} scored result(s); "
                "delete those results first or keep the checkpoint",
            )
        for child in session.exec(select(Checkpoint).where(Checkpoint.parent_id == c.id)).all():
            child.parent_id = None
        session.delete(c)
    session.flush()

    actor = str(session.info.get("actor") or "system")
    rows = _child_rows(t, task_id, actor, now)
    steps = [ReferenceStep(**r) for r in rows["steps"]]
    docs = [Document(**r) for r in rows["documents"]]
    session.add_all(steps + docs + [OrderingConstraint(**r) for r in rows["orderings"]])
    session.flush()
    for r in _link_checkpoints(rows["checkpoints"], t, [s.id or 0 for s in steps], cache):
        cp = old_cps.get(r["key"])
        if cp is None:
            session.add(Checkpoint(**r))
        else:
            for k, v in r.items():
                setattr(cp, k, v)
    session.flush()
    for r in _asset_rows(t, task_id, cache, [s.id or 0 for s in steps], [d.id or 0 for d in docs]):
        session.add(TaskAsset(**r))
    session.flush()


# ------------------------------------------------------------------ reading back


def load_bundles(session: Session, benchmark_id: int) -> list[TaskBundle]:
    """Every task of a benchmark with its children, in a handful of queries (fast for 100k tasks)."""
    from sqlmodel import col, select

    from store.models import Asset, Checkpoint, Document, OrderingConstraint, ReferenceStep, Task, TaskAsset

    tasks = list(session.exec(select(Task).where(Task.benchmark_id == benchmark_id).order_by(col(Task.id))).all())
    if not tasks:
        return []
    ids = [t.id for t in tasks]
    by_task: dict[str, dict[int, list[Any]]] = {}

    def collect(name: str, model: Any, order: Any) -> None:
        groups: dict[int, list[Any]] = defaultdict(list)
        for i in range(0, len(ids), CHUNK):
            chunk = ids[i : i + CHUNK]
            for row in session.exec(select(model).where(model.task_id.in_(chunk)).order_by(*order)).all():
                groups[row.task_id].append(row)
        by_task[name] = groups

    collect("steps", ReferenceStep, (ReferenceStep.task_id, ReferenceStep.ordinal))
    collect("checkpoints", Checkpoint, (Checkpoint.task_id, Checkpoint.ordinal, Checkpoint.id))
    collect("orderings", OrderingConstraint, (OrderingConstraint.task_id, OrderingConstraint.id))
    collect("documents", Document, (Document.task_id, Document.ordinal))
    links: dict[int, list[tuple[Any, Any]]] = defaultdict(list)
    for i in range(0, len(ids), CHUNK):
        chunk = ids[i : i + CHUNK]
        stmt = (
            select(TaskAsset, Asset)
            .join(Asset, col(Asset.id) == col(TaskAsset.asset_id))
            .where(TaskAsset.task_id.in_(chunk))
            .order_by(col(TaskAsset.task_id), col(TaskAsset.role), col(TaskAsset.ordinal))
        )
        for link, asset in session.exec(stmt).all():
            links[link.task_id].append((link, asset))
    return [
        TaskBundle(
            t,
            by_task["steps"].get(t.id, []),  # type: ignore[arg-type]
            by_task["checkpoints"].get(t.id, []),  # type: ignore[arg-type]
            by_task["orderings"].get(t.id, []),  # type: ignore[arg-type]
            by_task["documents"].get(t.id, []),  # type: ignore[arg-type]
            links.get(t.id, []),  # type: ignore[arg-type]
        )
        for t in tasks
    ]
