"""The ORM loader scoring used before the Core one (kept as the test oracle): load_run must equal it
field for field on every run shape, so scores stay byte-identical. This is the ORM loader as it stood
with scores bound to the task revision each trajectory ran on."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from sqlalchemy.engine import Connection
from sqlmodel import Session, select, col

from evaluation.scoring.items import Item

# Reading the audit trail for a past revision is shared; what this oracle re-implements is the loading.
from evaluation.scoring.loader import _checkpoints_as_of, _task_revisions
from store.models import (
    Asset,
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
from tests.support.must import must


class RunNotFound(LookupError):
    """No run with that id."""


@dataclass
class LoadedRun:
    run: dict[str, Any]
    benchmark: dict[str, Any]
    model: str
    items: list[Item]


def _row(obj: Any, fields: Iterable[str]) -> dict[str, Any]:
    return {f: getattr(obj, f) for f in fields}


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


def load_run(session: Session | Connection, run_id: int) -> LoadedRun:
    if isinstance(session, Connection):  # the runner reads through a plain connection
        session = Session(session)
    run = session.get(Run, run_id)
    if run is None:
        raise RunNotFound(f"no run with id {run_id}")
    bench = session.get(Benchmark, run.benchmark_id)
    endpoint = session.get(ModelEndpoint, run.endpoint_id) if run.endpoint_id else None
    trajs = list(session.exec(select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.id))).all())
    task_ids = sorted({t.task_id for t in trajs})
    traj_ids = [t.id for t in trajs if t.id is not None]

    tasks: dict[int, Task] = {}
    cps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    orders: dict[int, list[dict[str, Any]]] = defaultdict(list)
    steps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    tassets: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for chunk in _chunks(task_ids):
        for t in session.exec(select(Task).where(Task.id.in_(chunk))).all():  # type: ignore[union-attr]
            tasks[t.id] = t  # type: ignore[index]
        for c in session.exec(
            select(Checkpoint)
            .where(Checkpoint.task_id.in_(chunk))  # type: ignore[attr-defined]
            .order_by(col(Checkpoint.ordinal), col(Checkpoint.id))
        ).all():
            cps[c.task_id].append(_row(c, CP_FIELDS))
        for o in session.exec(
            select(OrderingConstraint)
            .where(OrderingConstraint.task_id.in_(chunk))  # type: ignore[attr-defined]
            .order_by(col(OrderingConstraint.id))
        ).all():
            orders[o.task_id].append({"key": o.key, "sequence": list(o.sequence or []), "max_gap": o.max_gap})
        for s in session.exec(
            select(ReferenceStep)
            .where(ReferenceStep.task_id.in_(chunk))  # type: ignore[attr-defined]
            .order_by(col(ReferenceStep.ordinal))
        ).all():
            steps[s.task_id].append(
                _row(
                    s,
                    (
                        "ordinal",
                        "thought",
                        "tool_name",
                        "tool_args",
                        "result_text",
                        "result",
                        "is_final",
                        "final_answer",
                    ),
                )
            )
        for link, sha in session.exec(
            select(TaskAsset, Asset.sha256)
            .join(Asset, col(Asset.id) == col(TaskAsset.asset_id))
            .where(TaskAsset.task_id.in_(chunk))  # type: ignore[attr-defined]
        ).all():  # type: ignore[attr-defined]
            tassets[link.task_id].append(
                {
                    "asset_id": link.asset_id,
                    "role": link.role,
                    "ordinal": link.ordinal,
                    "original_path": link.original_path,
                    "document_id": link.document_id,
                    "sha256": sha,
                }
            )

    events: dict[int, list[dict[str, Any]]] = defaultdict(list)
    event_assets: dict[int, list[int]] = defaultdict(list)
    asset_sha: dict[int, str] = {}
    for chunk in _chunks(traj_ids):
        rows = session.exec(
            select(Event)
            .where(Event.trajectory_id.in_(chunk))  # type: ignore[attr-defined]
            .order_by(col(Event.trajectory_id), col(Event.ordinal))
        ).all()
        for e in rows:
            events[e.trajectory_id].append(
                {"id": e.id, "ordinal": e.ordinal, "kind": e.kind, "payload": e.payload or {}, "failed": e.failed}
            )
        ev_ids = [e.id for e in rows]
        for sub in _chunks(ev_ids):  # type: ignore[arg-type]
            for ea, sha in session.exec(
                select(EventAsset, Asset.sha256)
                .join(Asset, col(Asset.id) == col(EventAsset.asset_id))
                .where(EventAsset.event_id.in_(sub))  # type: ignore[attr-defined]
            ).all():  # type: ignore[attr-defined]
                event_assets[ea.event_id].append(ea.asset_id)
                asset_sha[ea.asset_id] = sha

    # Payload asset ids that no EventAsset row names still need their hashes (judge prompts hash images).
    mentioned = {int(a) for evs in events.values() for e in evs for a in (e["payload"].get("asset_ids") or [])}
    missing = sorted(mentioned - set(asset_sha))
    for chunk in _chunks(missing):
        for aid, sha in session.exec(select(Asset.id, Asset.sha256).where(Asset.id.in_(chunk))).all():  # type: ignore[union-attr]
            asset_sha[aid] = sha

    # Files of an imported native record (e.g. an Agentic-MME run folder's orig.png) are stored assets too.
    native_sha = {
        sha
        for tr in trajs
        if isinstance(tr.native, dict)
        for sha in (tr.native.get("blobs") or {}).values()
        if isinstance(sha, str)
    }
    id_by_sha: dict[str, int] = {}
    for chunk in _chunks(sorted(native_sha)):  # type: ignore[arg-type]
        for aid, sha in session.exec(select(Asset.id, Asset.sha256).where(Asset.sha256.in_(chunk))).all():  # type: ignore[attr-defined]
            id_by_sha.setdefault(sha, must(aid))

    # A trajectory is scored against the task as it ran: its revision's fields (query, answer,
    # prompts built from them) and the checkpoints as they were then.
    edited = {(tr.task_id, tr.task_revision) for tr in trajs if tr.task_revision < tasks[tr.task_id].revision}
    old_tasks = _task_revisions(session, edited) if edited else {}

    items: list[Item] = []
    for tr in trajs:
        task = tasks[tr.task_id]
        task_row = _row(task, TASK_FIELDS)
        checkpoints = cps.get(tr.task_id, [])
        edit_state = None
        if (tr.task_id, tr.task_revision) in edited:
            past = old_tasks.get((tr.task_id, tr.task_revision))
            edit_state = "restored" if past is not None else "unrecorded"
            if past is not None:
                task_row = {**past, "id": task.id, "revision": tr.task_revision, "current_revision": task.revision}
            checkpoints = _checkpoints_as_of(session, tr.task_id, tr.started_at, checkpoints)
        evs = events.get(tr.id or 0, [])
        for e in evs:  # EventAsset rows complete a payload that forgot its asset ids
            e["assets"] = list(event_assets.get(e["id"], []))
            extra = [a for a in e["assets"] if a not in (e["payload"].get("asset_ids") or [])]
            if extra and e["kind"] in ("tool_result", "code_exec"):
                e["payload"] = {**e["payload"], "asset_ids": list(e["payload"].get("asset_ids") or []) + extra}
        ta = tassets.get(tr.task_id, [])
        shas = {a["asset_id"]: a["sha256"] for a in ta}
        shas.update(
            {
                a: asset_sha[a]
                for e in evs
                for a in list(e["payload"].get("asset_ids") or []) + e["assets"]
                if a in asset_sha
            }
        )
        native_assets = {
            rel: id_by_sha[sha]
            for rel, sha in ((tr.native or {}).get("blobs") or {}).items()
            if isinstance(tr.native, dict) and sha in id_by_sha
        }
        shas.update({aid: sha for sha, aid in id_by_sha.items() if aid in native_assets.values()})
        items.append(
            Item(
                native_assets=native_assets,
                task=task_row,
                trajectory={
                    "id": tr.id,
                    "task_id": tr.task_id,
                    "status": tr.status,
                    "final_answer": tr.final_answer,
                    "usage": tr.usage or {},
                    "native": tr.native,
                    "error": tr.error,
                    "task_revision": tr.task_revision,
                    "current_revision": task.revision,
                    "edited_after_run": edit_state,
                },
                events=evs,
                checkpoints=checkpoints,
                ordering=orders.get(tr.task_id, []),
                reference_steps=steps.get(tr.task_id, []),
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
