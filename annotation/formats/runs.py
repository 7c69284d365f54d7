"""Runs made by other harnesses, in and out: the neutral run shape, storing it as an imported Run, and
loading a stored run (any kind) for an exporter.

Event kinds and payloads follow ``store/events.py``. The other harness's own record goes into
``Trajectory.native`` unchanged, so a re-export of an imported run reproduces its files exactly.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlmodel import Session, col, select

from annotation.formats.assets import AssetCache
from annotation.formats.bulk import insert_many, insert_returning_ids
from annotation.formats.errors import FormatError
from annotation.formats.run_specs import (  # noqa: F401  (re-exported: the run shape's earlier home)
    EventSpec,
    RunBundle,
    RunImportSummary,
    RunSpec,
    TrajectoryBundle,
    TrajectorySpec,
)
from store.blobs import BlobStore
from store.schemas import event_problems
from store.models import (
    Asset,
    Benchmark,
    Checkpoint,
    CheckpointResult,
    Event,
    EventAsset,
    ModelEndpoint,
    Run,
    Task,
    Trajectory,
    utcnow,
)


def write_run(
    session: Session, blobs: BlobStore, fmt: Any, spec: RunSpec, benchmark: str, source: str, name: str | None = None
) -> RunImportSummary:
    """Store ``spec`` as one Run of kind "imported", inside the caller's transaction."""
    bench = session.exec(select(Benchmark).where(Benchmark.name == benchmark)).first()
    if bench is None:
        raise FormatError(source, None, None, f"no benchmark named {benchmark!r}; import its tasks first")
    tasks = dict(session.exec(select(Task.source_id, Task.id).where(Task.benchmark_id == bench.id)).all())
    revisions = dict(session.exec(select(Task.id, Task.revision).where(Task.benchmark_id == bench.id)).all())
    unknown = [t for t in spec.trajectories if t.source_id not in tasks]
    if unknown and len(unknown) == len(spec.trajectories):
        raise FormatError(
            source,
            unknown[0].record,
            "id",
            f"no task with source id {unknown[0].source_id!r} in "
            f"benchmark {benchmark!r} (none of the {len(unknown)} prediction(s) names a task of it)",
        )
    seen: dict[str, int] = {}
    kept: list[TrajectorySpec] = []
    notes = list(spec.notes)
    for t in spec.trajectories:
        if t.source_id not in tasks:
            if spec.skip_unknown_ids:
                if spec.unknown_id_differs:
                    spec.warnings.append(
                        f"{t.record}: no task with id {t.source_id!r}; ignored, but "
                        f"{spec.unknown_id_differs}: faithful scores of this file will differ"
                    )
                else:
                    notes.append(f"{t.record}: no task with id {t.source_id!r}; ignored (as the reference does)")
                continue
            raise FormatError(
                source, t.record, "id", f"no task with source id {t.source_id!r} in benchmark {benchmark!r}"
            )
        if t.source_id in seen:
            if not spec.keep_last_duplicate:
                raise FormatError(source, t.record, "id", f"a second prediction for task {t.source_id!r}")
            if spec.duplicate_differs:
                spec.warnings.append(
                    f"{t.record}: a second prediction for {t.source_id!r}; it replaces "
                    f"{kept[seen[t.source_id]].record}, but {spec.duplicate_differs}: faithful "
                    f"scores of this file will differ"
                )
            else:
                notes.append(
                    f"{t.record}: a second prediction for {t.source_id!r}; it replaces "
                    f"{kept[seen[t.source_id]].record} (the reference keeps the last)"
                )
            kept[seen[t.source_id]] = t
            continue
        seen[t.source_id] = len(kept)
        kept.append(t)
    if spec.missing_tasks_as_failed:
        missing = [sid for sid in tasks if sid not in seen]
        kept.extend(
            TrajectorySpec(
                sid,
                "(no prediction)",
                [],
                final_answer=None,
                status="failed",
                error="no prediction in the file",
                native={"no_prediction": True},
            )
            for sid in missing
        )
        if missing:
            notes.append(
                f"{len(missing)} task(s) have no prediction in the file; stored as failed trajectories "
                f"(the reference scores them too, as 'nan'): {', '.join(missing[:10])}"
                + (" …" if len(missing) > 10 else "")
            )
    spec.trajectories = kept
    now = utcnow()
    run_name = name or spec.name or f"{fmt.name} import {now:%Y-%m-%d %H:%M}"
    run = Run(
        name=run_name,
        benchmark_id=bench.id or 0,
        kind="imported",
        mode=spec.mode,
        status="done",
        config={
            "format": fmt.name,
            "source": source,
            **spec.config,
            **({"import_warnings": list(spec.warnings)} if spec.warnings else {}),
        },
        created_at=now,
        started_at=now,
        finished_at=now,
    )
    session.add(run)
    session.flush()
    cache = AssetCache(session, blobs)
    new_assets = cache.ensure(
        [d for t in spec.trajectories for e in t.events for d in e.assets]
        + [d for t in spec.trajectories for d in t.blobs]
    )
    traj_rows = [
        {
            "run_id": run.id,
            "task_id": tasks[t.source_id],
            "task_revision": revisions[tasks[t.source_id]],
            "status": t.status,
            "final_answer": t.final_answer,
            "usage": t.usage,
            "error": t.error,
            "native": t.native,
            "started_at": now,
            "finished_at": now,
        }
        for t in spec.trajectories
    ]
    traj_ids = insert_returning_ids(session, Trajectory.__table__, traj_rows)  # type: ignore[attr-defined]
    event_rows: list[dict[str, Any]] = []
    event_assets: list[list[int]] = []
    roles: list[str] = []
    for t, tid in zip(spec.trajectories, traj_ids):
        for i, e in enumerate(t.events):
            asset_ids = [cache.id_of(d) for d in e.assets]
            payload = dict(e.payload)
            if e.assets:
                payload["asset_ids"] = asset_ids
            problems = event_problems(e.kind, payload)
            if problems:  # the reader made an event chainmark's scorers and viewers cannot read
                raise FormatError(source, t.record, f"events[{i}] ({e.kind})", "; ".join(problems[:3]))
            event_rows.append(
                {
                    "trajectory_id": tid,
                    "ordinal": i,
                    "kind": e.kind,
                    "payload": payload,
                    "failed": e.failed,
                    "started_at": now,
                    "finished_at": now,
                }
            )
            event_assets.append(asset_ids)
            roles.append(e.asset_role)
    event_ids = insert_returning_ids(session, Event.__table__, event_rows)  # type: ignore[attr-defined]
    link_rows = [
        {"event_id": eid, "asset_id": aid, "ordinal": k, "role": role}
        for eid, aids, role in zip(event_ids, event_assets, roles)
        for k, aid in enumerate(aids)
    ]
    if link_rows:
        insert_many(session, EventAsset.__table__, link_rows)
    session.flush()
    return RunImportSummary(
        run.id or 0,
        run_name,
        fmt.name,
        benchmark,
        spec.mode,
        len(traj_ids),
        len(event_ids),
        new_assets,
        notes,
        list(spec.warnings),
    )


def load_run(session: Session, run_id: int) -> RunBundle:
    run = session.get(Run, run_id)
    if run is None:
        raise LookupError(f"no run with id {run_id}")
    bench = session.get(Benchmark, run.benchmark_id)
    endpoint = session.get(ModelEndpoint, run.endpoint_id) if run.endpoint_id else None
    rows = session.exec(
        select(Trajectory, Task)
        .join(Task, col(Task.id) == col(Trajectory.task_id))
        .where(Trajectory.run_id == run_id)
        .order_by(col(Trajectory.id))
    ).all()
    traj_ids = [t.id for t, _ in rows]
    events: dict[int, list[Any]] = defaultdict(list)
    for i in range(0, len(traj_ids), 500):
        chunk = traj_ids[i : i + 500]
        for e in session.exec(
            select(Event).where(Event.trajectory_id.in_(chunk)).order_by(col(Event.trajectory_id), col(Event.ordinal))
        ).all():
            events[e.trajectory_id].append(e)
    event_ids = [e.id for es in events.values() for e in es]
    links: dict[int, list[tuple[Any, Any]]] = defaultdict(list)
    for i in range(0, len(event_ids), 500):
        chunk = event_ids[i : i + 500]
        for link, asset in session.exec(
            select(EventAsset, Asset)
            .join(Asset, col(Asset.id) == col(EventAsset.asset_id))
            .where(EventAsset.event_id.in_(chunk))
            .order_by(col(EventAsset.event_id), col(EventAsset.ordinal))
        ).all():
            links[link.event_id].append((link, asset))
    bundles = [
        TrajectoryBundle(t, task, events.get(t.id, []), {e.id: links.get(e.id, []) for e in events.get(t.id, [])})
        for t, task in rows
    ]
    return RunBundle(run, bench, endpoint, bundles)


def asset_sha_by_id(session: Session, ids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        out.update(dict(session.exec(select(Asset.id, Asset.sha256).where(Asset.id.in_(ids[i : i + 500]))).all()))
    return out


def checkpoint_results(session: Session, trajectory_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """trajectory id -> [{key, passed, score, method, scoring_mode}] as scoring stored them."""
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for i in range(0, len(trajectory_ids), 500):
        chunk = trajectory_ids[i : i + 500]
        rows = session.exec(
            select(CheckpointResult, Checkpoint.key)
            .join(Checkpoint, col(Checkpoint.id) == col(CheckpointResult.checkpoint_id))
            .where(col(CheckpointResult.trajectory_id).in_(chunk))
            .order_by(col(CheckpointResult.trajectory_id), col(Checkpoint.id))
        ).all()
        for result, key in rows:
            out[result.trajectory_id].append(
                {
                    "key": key,
                    "passed": result.passed,
                    "score": result.score,
                    "method": result.method,
                    "scoring_mode": result.scoring_mode,
                }
            )
    return dict(out)
