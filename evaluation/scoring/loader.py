"""Load a run from the store into plain ``Item``s (one per trajectory), with a handful of bulk queries."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

import orjson

import sqlalchemy as sa
from sqlmodel import Session, select

from evaluation.scoring.items import Item
from store.models import (
    Asset,
    AuditEvent,
    Benchmark,
    Checkpoint,
    Event,
    EventAsset,
    ModelEndpoint,
    OrderingConstraint,
    ReferenceStep,
    Run,
    Task,
    TaskAsset,
    Trajectory,
)


class RunNotFound(LookupError):
    """No run with that id."""


@dataclass
class LoadedRun:
    run: dict[str, Any]
    benchmark: dict[str, Any]
    model: str
    items: list[Item]


TASK_FIELDS = (
    "id",
    "source_id",
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
    "source_record",
    "revision",
)
CP_FIELDS = (
    "id",
    "key",
    "ordinal",
    "axis",
    "description",
    "tools",
    "code_check",
    "visual_check",
    "gt_asset_id",
    "search_check",
    "answer_check",
    "weight",
    "parent_id",
    "step_id",
    "meta",
)


def _chunks(ids: list[int], n: int = 500) -> Iterable[list[int]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


def _task_revisions(session: Session, wanted: set[tuple[int, int]]) -> dict[tuple[int, int], dict[str, Any]]:
    """(task id, revision) → the task's fields at that revision, from the audit trail: the edit that
    moved a task off revision r recorded the whole row as it was at r. Missing when not recorded."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    task_ids = sorted({t for t, _ in wanted})
    for chunk in _chunks(task_ids):
        for a in session.exec(
            select(AuditEvent)
            .where(AuditEvent.entity == "task", AuditEvent.action == "update", AuditEvent.entity_id.in_(chunk))  # type: ignore[union-attr]
            .order_by(AuditEvent.id)
        ).all():
            before = a.before if isinstance(a.before, dict) else {}
            key = (a.entity_id or 0, int(before.get("revision") or 0))
            if key in wanted and key not in out:
                out[key] = {f: before.get(f) for f in TASK_FIELDS}
    return out


def _checkpoints_as_of(
    session: Session, task_id: int, since: Any, current: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The task's checkpoints as they were at ``since`` (a trajectory's start): each edited later is
    taken from the first later edit's "before"; ones created later are left out."""
    if since is None:
        return current
    ids = [c["id"] for c in current]
    if not ids:
        return current
    events = session.exec(
        select(AuditEvent)
        .where(
            AuditEvent.entity == "checkpoint",
            AuditEvent.entity_id.in_(ids),  # type: ignore[union-attr]
            AuditEvent.created_at > since,
        )
        .order_by(AuditEvent.id)
    ).all()
    first: dict[int, AuditEvent] = {}
    for a in events:
        first.setdefault(a.entity_id or 0, a)
    out = []
    for c in current:
        a = first.get(c["id"])
        if a is None:
            out.append(c)
        elif a.action == "update" and isinstance(a.before, dict):
            out.append({**c, **{f: a.before.get(f, c.get(f)) for f in CP_FIELDS}})
        # a "create" after the run started: that checkpoint did not exist yet
    return out


_EMPTY = {"null": None, "{}": dict, "[]": list}


def _decode_sqlite(raw: Any) -> Any:
    """A JSON column's stored text, decoded once here (no per-value type processor chain); the
    commonest small values skip the parser."""
    if raw is None:
        return None
    empty = _EMPTY.get(raw, _EMPTY)
    if empty is not _EMPTY:
        return empty() if empty is not None else None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # NaN, Infinity, integers beyond 64 bits: what json.dumps may write
        return json.loads(raw)


def _identity(value: Any) -> Any:
    return value


class _Reader:
    """Core selects on the session's connection (no ORM row processing). On SQLite, JSON columns are
    read as text and decoded by ``_decode_sqlite``; other drivers already hand back decoded values."""

    def __init__(self, session: Session):
        self.conn = session.connection()
        self.sqlite = self.conn.dialect.name == "sqlite"
        self.decode = _decode_sqlite if self.sqlite else _identity

    def cols(self, model: Any, fields: Iterable[str]) -> tuple[list[Any], list[bool]]:
        out, is_json = [], []
        for f in fields:
            col = getattr(model, f)
            j = isinstance(col.type, sa.JSON)
            out.append(sa.type_coerce(col, sa.Text) if j and self.sqlite else col)
            is_json.append(j)
        return out, is_json

    def rows(
        self, model: Any, fields: tuple[str, ...], where: Any, *order: Any, lead: tuple[Any, ...] = ()
    ) -> Iterable[tuple[tuple[Any, ...], dict[str, Any]]]:
        """(leading column values, {field: value}) per row, JSON decoded."""
        cols, is_json = self.cols(model, fields)
        decode, n = self.decode, len(lead)
        for r in self.conn.execute(sa.select(*lead, *cols).where(where).order_by(*order)).all():
            values = r[n:]
            yield tuple(r[:n]), {f: (decode(v) if j else v) for f, v, j in zip(fields, values, is_json)}

    def execute(self, stmt: Any) -> Any:
        return self.conn.execute(stmt)


STEP_FIELDS = ("ordinal", "thought", "tool_name", "tool_args", "result_text", "result", "is_final", "final_answer")
TRAJ_FIELDS = ("id", "task_id", "status", "final_answer", "usage", "native", "error", "task_revision", "started_at")


def load_run(session: Session, run_id: int, only: Iterable[int] | None = None) -> LoadedRun:
    """Columns, not ORM objects: Core selects read exactly the fields scoring uses, each JSON value is
    decoded once by its column type, and event rows are consumed as they stream from the cursor
    (ORM loading of 10k trajectories was ~80 % of ``chainmark score``). ``only`` keeps just those
    trajectories of the run (one item's score for a review screen, or a queued judge's work item, without loading the whole run)."""
    run = session.get(Run, run_id)
    if run is None:
        raise RunNotFound(f"no run with id {run_id}")
    bench = session.get(Benchmark, run.benchmark_id)
    endpoint = session.get(ModelEndpoint, run.endpoint_id) if run.endpoint_id else None
    db = _Reader(session)
    where: Any = Trajectory.run_id == run_id
    if only is not None:
        where = sa.and_(where, Trajectory.id.in_(list(only)))  # type: ignore[union-attr]
    trajs = [t for _, t in db.rows(Trajectory, TRAJ_FIELDS, where, Trajectory.id)]
    task_ids = sorted({t["task_id"] for t in trajs})
    traj_ids = [t["id"] for t in trajs]

    tasks: dict[int, dict[str, Any]] = {}
    cps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    orders: dict[int, list[dict[str, Any]]] = defaultdict(list)
    steps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    tassets: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for chunk in _chunks(task_ids):
        for _, t in db.rows(Task, TASK_FIELDS, Task.id.in_(chunk)):  # type: ignore[union-attr]
            tasks[t["id"]] = t
        for (tid,), c in db.rows(
            Checkpoint,
            CP_FIELDS,
            Checkpoint.task_id.in_(chunk),  # type: ignore[attr-defined]
            Checkpoint.ordinal,
            Checkpoint.id,
            lead=(Checkpoint.task_id,),
        ):
            cps[tid].append(c)
        for (tid,), o in db.rows(
            OrderingConstraint,
            ("key", "sequence", "max_gap"),
            OrderingConstraint.task_id.in_(chunk),  # type: ignore[attr-defined]
            OrderingConstraint.id,
            lead=(OrderingConstraint.task_id,),
        ):
            orders[tid].append({"key": o["key"], "sequence": list(o["sequence"] or []), "max_gap": o["max_gap"]})
        for (tid,), st in db.rows(
            ReferenceStep,
            STEP_FIELDS,
            ReferenceStep.task_id.in_(chunk),  # type: ignore[attr-defined]
            ReferenceStep.ordinal,
            lead=(ReferenceStep.task_id,),
        ):
            steps[tid].append(st)
        for tid, aid, role, ordinal, path, doc, sha in db.execute(
            sa.select(
                TaskAsset.task_id,
                TaskAsset.asset_id,
                TaskAsset.role,
                TaskAsset.ordinal,
                TaskAsset.original_path,
                TaskAsset.document_id,
                Asset.sha256,
            )
            .join(Asset, Asset.id == TaskAsset.asset_id)
            .where(TaskAsset.task_id.in_(chunk))  # type: ignore[attr-defined]
        ):
            tassets[tid].append(
                {
                    "asset_id": aid,
                    "role": role,
                    "ordinal": ordinal,
                    "original_path": path,
                    "document_id": doc,
                    "sha256": sha,
                }
            )

    events: dict[int, list[dict[str, Any]]] = defaultdict(list)
    event_assets: dict[int, list[int]] = defaultdict(list)
    asset_sha: dict[int, str] = {}
    (payload_col,), _ = db.cols(Event, ("payload",))
    decode = db.decode
    for chunk in _chunks(traj_ids):
        ev_ids = []
        for tid, eid, ordinal, kind, payload, failed in db.execute(
            sa.select(Event.trajectory_id, Event.id, Event.ordinal, Event.kind, payload_col, Event.failed)
            .where(Event.trajectory_id.in_(chunk))  # type: ignore[attr-defined]
            .order_by(Event.trajectory_id, Event.ordinal)
        ).all():
            events[tid].append(
                {"id": eid, "ordinal": ordinal, "kind": kind, "payload": decode(payload) or {}, "failed": failed}
            )
            ev_ids.append(eid)
        for sub in _chunks(ev_ids):
            for eid, aid, sha in db.execute(
                sa.select(EventAsset.event_id, EventAsset.asset_id, Asset.sha256)  # type: ignore[call-overload]
                .join(Asset, Asset.id == EventAsset.asset_id)
                .where(EventAsset.event_id.in_(sub))  # type: ignore[attr-defined]
            ):
                event_assets[eid].append(aid)
                asset_sha[aid] = sha

    # Payload asset ids that no EventAsset row names still need their hashes (judge prompts hash images).
    mentioned = {int(a) for evs in events.values() for e in evs for a in (e["payload"].get("asset_ids") or [])}
    missing = sorted(mentioned - set(asset_sha))
    for chunk in _chunks(missing):
        for aid, sha in db.execute(sa.select(Asset.id, Asset.sha256).where(Asset.id.in_(chunk))):  # type: ignore[union-attr]
            asset_sha[aid] = sha

    # Files of an imported native record (e.g. an Agentic-MME run folder's orig.png) are stored assets too.
    native_sha = {
        sha
        for tr in trajs
        if isinstance(tr["native"], dict)
        for sha in (tr["native"].get("blobs") or {}).values()
        if isinstance(sha, str)
    }
    id_by_sha: dict[str, int] = {}
    for chunk in _chunks(sorted(native_sha)):  # type: ignore[arg-type]
        for aid, sha in db.execute(sa.select(Asset.id, Asset.sha256).where(Asset.sha256.in_(chunk))):  # type: ignore[attr-defined]
            id_by_sha.setdefault(sha, aid)

    # A trajectory is scored against the task as it ran: its revision's fields (query, answer,
    # prompts built from them) and the checkpoints as they were then.
    edited = {
        (tr["task_id"], tr["task_revision"])
        for tr in trajs
        if tr["task_revision"] is not None and tr["task_revision"] < tasks[tr["task_id"]]["revision"]
    }
    old_tasks = _task_revisions(session, edited) if edited else {}

    items: list[Item] = []
    for tr in trajs:
        task = tasks[tr["task_id"]]
        task_row = dict(task)
        checkpoints = cps.get(tr["task_id"], [])
        edit_state = None
        if (tr["task_id"], tr["task_revision"]) in edited:
            past = old_tasks.get((tr["task_id"], tr["task_revision"]))
            edit_state = "restored" if past is not None else "unrecorded"
            if past is not None:
                task_row = {
                    **past,
                    "id": task["id"],
                    "revision": tr["task_revision"],
                    "current_revision": task["revision"],
                }
            checkpoints = _checkpoints_as_of(session, tr["task_id"], tr["started_at"], checkpoints)
        evs = events.get(tr["id"] or 0, [])
        for e in evs:  # EventAsset rows complete a payload that forgot its asset ids
            e["assets"] = list(event_assets.get(e["id"], []))
            extra = [a for a in e["assets"] if a not in (e["payload"].get("asset_ids") or [])]
            if extra and e["kind"] in ("tool_result", "code_exec"):
                e["payload"] = {**e["payload"], "asset_ids": list(e["payload"].get("asset_ids") or []) + extra}
        ta = tassets.get(tr["task_id"], [])
        shas = {a["asset_id"]: a["sha256"] for a in ta}
        shas.update(
            {
                a: asset_sha[a]
                for e in evs
                for a in list(e["payload"].get("asset_ids") or []) + e["assets"]
                if a in asset_sha
            }
        )
        native = tr["native"]
        native_assets = {
            rel: id_by_sha[sha]
            for rel, sha in ((native or {}).get("blobs") or {}).items()
            if isinstance(native, dict) and sha in id_by_sha
        }
        shas.update({aid: sha for sha, aid in id_by_sha.items() if aid in native_assets.values()})
        items.append(
            Item(
                native_assets=native_assets,
                task=task_row,
                trajectory={
                    "id": tr["id"],
                    "task_id": tr["task_id"],
                    "status": tr["status"],
                    "final_answer": tr["final_answer"],
                    "usage": tr["usage"] or {},
                    "native": native,
                    "error": tr["error"],
                    "task_revision": tr["task_revision"],
                    "current_revision": task["revision"],
                    "edited_after_run": edit_state,
                },
                events=evs,
                checkpoints=checkpoints,
                ordering=orders.get(tr["task_id"], []),
                reference_steps=steps.get(tr["task_id"], []),
                task_assets=ta,
                asset_sha=shas,
            )
        )
    return LoadedRun(
        run={
            "id": run.id,
            "name": run.name,
            "mode": run.mode,
            "kind": run.kind,
            "status": run.status,
            "config": run.config or {},
            "prompt_version": run.prompt_version,
        },
        benchmark={
            "id": bench.id if bench else None,
            "name": bench.name if bench else "",
            "source_format": bench.source_format if bench else "",
            "settings": bench.settings if bench else {},
        },
        model=(endpoint.model if endpoint else (run.config or {}).get("model") or run.name or f"run {run.id}"),
        items=items,
    )
