"""Putting parsed tasks into the store and reading them back out, the same way for every format.

Import runs inside the caller's single transaction. New tasks go in as bulk inserts (with their audit
rows written alongside, since bulk inserts bypass the ORM flush hook); tasks that already exist are
matched by source id and updated through the ORM, so the audit hook records before/after. A task whose
parsed content has not changed since the last import is left alone, local edits included.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Iterable

import sqlalchemy as sa
from sqlmodel import Session, select

from annotation.answers import AnswerSpecError, validate_answer_spec
from annotation.formats.base import DatasetSpec, TaskBundle, TaskSpec
from annotation.formats.errors import FormatError
from annotation.tasks import ensure_benchmark
from store.blobs import BlobStore, FolderBlobStore, guess_mime, sha256_of
from store.models import (
    Asset,
    AuditEvent,
    Benchmark,
    Checkpoint,
    CheckpointResult,
    Document,
    OrderingConstraint,
    ReferenceStep,
    Task,
    TaskAsset,
    utcnow,
)

TASK_FIELDS = ("query", "category", "subcategory", "intent", "level", "domain", "answer_spec", "output_format",
               "tools_offered", "reference_tool_calls", "max_tool_calls", "penalty_per_extra_call", "meta")
_CHUNK = 500
FINGERPRINT_VERSION = 1  # bump when a format module maps records differently, so re-imports refresh


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
    notes: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        return self.created + self.updated + self.unchanged

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tasks": self.tasks}


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _audit_value(key: str, value: Any) -> Any:
    # The verbatim source record lives on the task row itself; the audit trail notes where it came from.
    if key == "source_record":
        return "<imported source record>"
    return _jsonable(value)


def fingerprint(spec: TaskSpec, asset_shas: list[str]) -> str:
    """Hash of what an import of this task depends on (the record verbatim, derived meta, the files), to
    recognise an unchanged re-import. Everything else is derived from these by the format module."""
    body = [FINGERPRINT_VERSION, spec.record, spec.fields.get("meta"),
            [[sha, a.original_path, a.role, a.url, a.document_index] for sha, a in zip(asset_shas, spec.assets)]]
    return hashlib.sha256(json.dumps(body, ensure_ascii=False, default=str).encode()).hexdigest()


def _check_spec(spec: TaskSpec, source: str) -> None:
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
        if missing:
            raise FormatError(source, spec.source_id, f"ordering_constraints[{o.key}].sequence",
                              f"names unknown checkpoint(s): {', '.join(missing)}")
    if len(spec.source_id) > 200:
        raise FormatError(source, spec.source_id[:40] + "…", "id", "source id longer than 200 characters")


def _image_size(data: bytes, mime: str) -> tuple[int | None, int | None]:
    if mime == "image/png" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")  # no decode needed
    if not mime.startswith("image/"):
        return None, None
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as im:
            return im.size
    except Exception:  # undecodable: keep the bytes, size unknown
        return None, None


def _put_all(blobs: BlobStore, session: Session, datas: list[bytes]) -> None:
    """Blob files are independent and content-addressed: write them from a few threads (it is I/O)."""
    if isinstance(blobs, FolderBlobStore) and len(datas) > 32:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(blobs.put, datas))
    else:
        for data in datas:
            blobs.put(data, session)


class AssetCache:
    """Distinct blobs of one import: each stored once, Asset rows created in bulk."""

    def __init__(self, session: Session, blobs: BlobStore):
        self.session = session
        self.blobs = blobs
        self.ids: dict[str, int] = {}

    def ensure(self, datas: Iterable[bytes]) -> int:
        pending: dict[str, bytes] = {}
        for data in datas:
            sha = sha256_of(data)
            if sha not in self.ids and sha not in pending:
                pending[sha] = data
        shas = list(pending)
        for i in range(0, len(shas), _CHUNK):
            chunk = shas[i:i + _CHUNK]
            for aid, sha in self.session.exec(select(Asset.id, Asset.sha256).where(Asset.sha256.in_(chunk))).all():
                self.ids[sha] = aid
        rows = []
        now = utcnow()
        fresh = {sha: data for sha, data in pending.items() if sha not in self.ids}
        _put_all(self.blobs, self.session, list(fresh.values()))
        for sha, data in fresh.items():
            mime = guess_mime(data)
            w, h = _image_size(data, mime)
            rows.append({"sha256": sha, "mime": mime, "size": len(data), "width": w, "height": h, "created_at": now})
        if rows:
            ids = insert_returning_ids(self.session, Asset, rows)
            for row, aid in zip(rows, ids):
                self.ids[row["sha256"]] = aid
        return len(rows)

    def id_of(self, data: bytes) -> int:
        return self.ids[sha256_of(data)]


def insert_many(session: Session, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    """One executemany. On SQLite the rows go to the driver as tuples through each column type's own
    bind processor (the same stored values as a Core insert, without its per-row parameter assembly,
    which dominated a 10,000-task import); other databases use a plain Core insert."""
    if not rows:
        return
    conn = session.connection()
    if conn.dialect.name != "sqlite":
        conn.execute(table.insert(), rows)
        return
    cols = list(rows[0])
    procs = [table.c[c].type._cached_bind_processor(conn.dialect) for c in cols]
    sql = f'INSERT INTO "{table.name}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) ' \
          f'VALUES ({", ".join("?" for _ in cols)})'
    params = [tuple(p(r[c]) if p else r[c] for c, p in zip(cols, procs)) for r in rows]
    conn.exec_driver_sql(sql, params)


NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    "task": ("benchmark_id", "source_id"), "referencestep": ("task_id", "ordinal"),
    "checkpoint": ("task_id", "key"), "orderingconstraint": ("task_id", "key"), "document": ("task_id", "ordinal"),
    "asset": ("sha256",), "trajectory": ("run_id", "task_id"), "event": ("trajectory_id", "ordinal"),
}


def insert_returning_ids(session: Session, model: Any, rows: list[dict[str, Any]]) -> list[int]:
    """Insert with one executemany, then read the new ids back by each row's natural key.

    (RETURNING with guaranteed row order makes SQLAlchemy send SQLite one statement per row, which
    is 10× slower; the natural keys are unique among the rows of one import, and new.)
    """
    if not rows:
        return []
    table = model.__table__
    insert_many(session, table, rows)
    keys = NATURAL_KEYS[table.name]
    first = table.c[keys[0]]
    found: dict[tuple[Any, ...], int] = {}
    distinct = list(dict.fromkeys(r[keys[0]] for r in rows))
    for i in range(0, len(distinct), _CHUNK):
        chunk = distinct[i:i + _CHUNK]
        stmt = sa.select(table.c.id, *(table.c[k] for k in keys)).where(first.in_(chunk))
        for row in session.connection().execute(stmt):
            found[tuple(row[1:])] = row[0]
    return [found[tuple(r[k] for k in keys)] for r in rows]


def _bulk(session: Session, model: Any, rows: list[dict[str, Any]], audit: str | None, actor: str,
          now: datetime) -> list[int]:
    """Insert rows, returning ids in row order; write their audit 'create' events too."""
    if not rows:
        return []
    if audit is None and model.__table__.name not in NATURAL_KEYS:
        insert_many(session, model.__table__, rows)
        return []
    ids = insert_returning_ids(session, model, rows)
    if audit:
        now_iso = now.isoformat()
        events = [{"actor": actor, "action": "create", "entity": audit, "entity_id": rid, "before": None,
                   "after": {"id": rid, **{k: now_iso if v is now else _audit_value(k, v) for k, v in row.items()}},
                   "created_at": now}
                  for row, rid in zip(rows, ids)]
        insert_many(session, AuditEvent.__table__, events)
    return ids


def _task_row(spec: TaskSpec, benchmark_id: int, actor: str, now: datetime, meta: dict[str, Any]) -> dict[str, Any]:
    f = spec.fields
    return {
        "benchmark_id": benchmark_id, "source_id": spec.source_id, "query": f["query"],
        "category": f.get("category"), "subcategory": f.get("subcategory"), "intent": f.get("intent"),
        "level": f.get("level"), "domain": f.get("domain"),
        "answer_spec": f.get("answer_spec") or {"kind": "none"}, "output_format": f.get("output_format"),
        "status": "draft", "revision": 1, "author": actor, "tools_offered": list(f.get("tools_offered") or []),
        "reference_tool_calls": f.get("reference_tool_calls"), "max_tool_calls": f.get("max_tool_calls"),
        "penalty_per_extra_call": f.get("penalty_per_extra_call"), "meta": meta,
        "source_record": spec.record, "created_at": now, "updated_at": now,
    }


def _child_rows(spec: TaskSpec, task_id: int, actor: str, now: datetime) -> dict[str, list[dict[str, Any]]]:
    steps = [{"task_id": task_id, "ordinal": i, "thought": s.thought, "tool_name": s.tool_name,
              "tool_args": s.tool_args, "result_text": s.result_text, "result": s.result,
              "is_final": s.final_answer is not None, "final_answer": s.final_answer, "recorded_by": actor,
              "recorded_at": now, "meta": s.meta} for i, s in enumerate(spec.steps)]
    cps = [{"task_id": task_id, "step_id": None, "parent_id": None, "key": c.key, "ordinal": i, "axis": c.axis,
            "description": c.description, "tools": list(c.tools), "code_check": c.code_check,
            "visual_check": c.visual_check, "gt_asset_id": None, "search_check": c.search_check,
            "answer_check": c.answer_check, "weight": c.weight, "meta": c.meta}
           for i, c in enumerate(spec.checkpoints)]
    orders = [{"task_id": task_id, "key": o.key, "sequence": list(o.sequence), "max_gap": o.max_gap}
              for o in spec.orderings]
    docs = [{"task_id": task_id, "ordinal": i, "title": d.title, "text": d.text, "meta": d.meta}
            for i, d in enumerate(spec.documents)]
    return {"steps": steps, "checkpoints": cps, "orderings": orders, "documents": docs}


def _asset_rows(spec: TaskSpec, task_id: int, cache: AssetCache, step_ids: list[int],
                doc_ids: list[int]) -> list[dict[str, Any]]:
    rows = []
    per_role: dict[str, int] = defaultdict(int)
    for a in spec.assets:
        ordinal = per_role[a.role]
        per_role[a.role] += 1
        rows.append({"task_id": task_id, "asset_id": cache.id_of(a.data), "role": a.role, "ordinal": ordinal,
                     "document_id": doc_ids[a.document_index] if a.document_index is not None else None,
                     "step_id": step_ids[a.step_index] if a.step_index is not None else None,
                     "original_path": a.original_path, "url": a.url})
    return rows


def write_dataset(session: Session, blobs: BlobStore, fmt: Any, spec: DatasetSpec, benchmark: str | None,
                  source: str) -> ImportSummary:
    """Upsert every task of ``spec`` into the benchmark, inside the caller's transaction."""
    name = benchmark or fmt.default_benchmark
    for t in spec.tasks:
        _check_spec(t, source)
    seen: dict[str, int] = {}
    for i, t in enumerate(spec.tasks):
        if t.source_id in seen:
            raise FormatError(source, t.source_id, "id", f"source id appears twice (records {seen[t.source_id] + 1} "
                                                         f"and {i + 1})")
        seen[t.source_id] = i
    existing_bench = session.exec(select(Benchmark).where(Benchmark.name == name)).first()
    if existing_bench is not None and existing_bench.source_format not in (fmt.source_format, "chainmark"):
        raise FormatError(source, None, None, f"benchmark {name!r} holds {existing_bench.source_format} tasks; "
                                              f"import {fmt.name} data into another benchmark (--benchmark)")
    bench = ensure_benchmark(session, name, fmt.source_format, tool_set=fmt.tool_set)
    settings = dict(bench.settings or {})
    settings[fmt.name] = {**(settings.get(fmt.name) or {}), **spec.settings}
    bench.settings = settings
    session.flush()

    actor = str(session.info.get("actor") or "system")
    now = utcnow()
    summary = ImportSummary(fmt.name, name, source, notes=list(spec.notes))
    cache = AssetCache(session, blobs)
    summary.assets = cache.ensure(a.data for t in spec.tasks for a in t.assets)

    existing = {sid: (tid, rev, meta) for tid, sid, rev, meta in session.exec(
        select(Task.id, Task.source_id, Task.revision, Task.meta).where(Task.benchmark_id == bench.id)).all()}
    new_specs: list[tuple[TaskSpec, str]] = []
    for t in spec.tasks:
        fp = fingerprint(t, [sha256_of(a.data) for a in t.assets])
        if t.source_id not in existing:
            new_specs.append((t, fp))
            continue
        tid, rev, meta = existing[t.source_id]
        if ((meta or {}).get("import") or {}).get("fingerprint") == fp:
            summary.unchanged += 1
            continue
        _update_task(session, tid, t, fp, fmt.name, cache, now)
        summary.updated += 1
        _count(summary, t)

    rows = [_task_row(t, bench.id or 0, actor, now,
                      {**(t.fields.get("meta") or {}), "import": {"format": fmt.name, "fingerprint": fp, "revision": 1}})
            for t, fp in new_specs]
    task_ids = _bulk(session, Task, rows, "task", actor, now)
    children: dict[str, list[dict[str, Any]]] = defaultdict(list)
    owners: dict[str, list[tuple[int, int]]] = defaultdict(list)  # kind -> [(spec index, position in spec)]
    for n, ((t, _), tid) in enumerate(zip(new_specs, task_ids)):
        for kind, krows in _child_rows(t, tid, actor, now).items():
            children[kind].extend(krows)
            owners[kind].extend((n, i) for i in range(len(krows)))
        _count(summary, t)
    ids: dict[str, list[int]] = {}
    for kind, model, audit in (("steps", ReferenceStep, "referencestep"), ("checkpoints", Checkpoint, "checkpoint"),
                               ("orderings", OrderingConstraint, "orderingconstraint"),
                               ("documents", Document, "document")):
        ids[kind] = _bulk(session, model, children[kind], audit, actor, now)
    per_task: dict[str, dict[int, list[int]]] = {k: defaultdict(list) for k in ("steps", "documents")}
    for kind in per_task:
        for (n, _), rid in zip(owners[kind], ids[kind]):
            per_task[kind][n].append(rid)
    asset_rows = []
    for n, ((t, _), tid) in enumerate(zip(new_specs, task_ids)):
        asset_rows.extend(_asset_rows(t, tid, cache, per_task["steps"][n], per_task["documents"][n]))
    _bulk(session, TaskAsset, asset_rows, None, actor, now)
    summary.created = len(task_ids)
    session.flush()
    return summary


def _count(summary: ImportSummary, t: TaskSpec) -> None:
    summary.steps += len(t.steps)
    summary.checkpoints += len(t.checkpoints)
    summary.documents += len(t.documents)


def _update_task(session: Session, task_id: int, t: TaskSpec, fp: str, fmt_name: str, cache: AssetCache,
                 now: datetime) -> None:
    """Replace an existing task's content with the re-imported one (audited through the ORM)."""
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
    task.source_record = t.record
    task.revision = (task.revision or 0) + 1
    task.updated_at = now
    task.meta = {**(t.fields.get("meta") or {}),
                 "import": {"format": fmt_name, "fingerprint": fp, "revision": task.revision}}

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
        scored = session.exec(select(sa.func.count()).select_from(CheckpointResult)
                              .where(CheckpointResult.checkpoint_id == c.id)).one()
        if scored:
            raise FormatError(fmt_name, t.source_id, f"checkpoints.{c.key}",
                              f"the new data drops checkpoint {c.key!r}, which has {scored} scored result(s); "
                              "delete those results first or keep the checkpoint")
        for child in session.exec(select(Checkpoint).where(Checkpoint.parent_id == c.id)).all():
            child.parent_id = None
        session.delete(c)
    session.flush()

    actor = str(session.info.get("actor") or "system")
    rows = _child_rows(t, task_id, actor, now)
    steps = [ReferenceStep(**r) for r in rows["steps"]]
    docs = [Document(**r) for r in rows["documents"]]
    session.add_all(steps + docs + [OrderingConstraint(**r) for r in rows["orderings"]])
    for r in rows["checkpoints"]:
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
    tasks = list(session.exec(select(Task).where(Task.benchmark_id == benchmark_id).order_by(Task.id)).all())
    if not tasks:
        return []
    ids = [t.id for t in tasks]
    by_task: dict[str, dict[int, list[Any]]] = {}

    def collect(name: str, model: Any, order: Any) -> None:
        groups: dict[int, list[Any]] = defaultdict(list)
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i:i + _CHUNK]
            for row in session.exec(select(model).where(model.task_id.in_(chunk)).order_by(*order)).all():
                groups[row.task_id].append(row)
        by_task[name] = groups

    collect("steps", ReferenceStep, (ReferenceStep.task_id, ReferenceStep.ordinal))
    collect("checkpoints", Checkpoint, (Checkpoint.task_id, Checkpoint.ordinal, Checkpoint.id))
    collect("orderings", OrderingConstraint, (OrderingConstraint.task_id, OrderingConstraint.id))
    collect("documents", Document, (Document.task_id, Document.ordinal))
    links: dict[int, list[tuple[Any, Any]]] = defaultdict(list)
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i:i + _CHUNK]
        stmt = (select(TaskAsset, Asset).join(Asset, Asset.id == TaskAsset.asset_id)
                .where(TaskAsset.task_id.in_(chunk)).order_by(TaskAsset.task_id, TaskAsset.role, TaskAsset.ordinal))
        for link, asset in session.exec(stmt).all():
            links[link.task_id].append((link, asset))
    return [TaskBundle(t, by_task["steps"].get(t.id, []), by_task["checkpoints"].get(t.id, []),
                       by_task["orderings"].get(t.id, []), by_task["documents"].get(t.id, []), links.get(t.id, []))
            for t in tasks]
