"""Human baseline bookkeeping: an annotator's blind attempt stored like a model's trajectory.

One ``Run`` of kind ``human`` per (benchmark, annotator) collects their attempts; each task gets a
``Trajectory`` whose events use the same vocabulary as the harness (``store.events``), so the
benchmark's scorers treat the human row exactly like a model row.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from store import events as ev
from store.models import Event, EventAsset, Run, Task, Trajectory, utcnow


def human_trajectory(session: Session, task_id: int, actor: str) -> Trajectory:
    """The annotator's open trajectory on this task (created on first use); refuses a finished one."""
    task = session.get(Task, task_id)
    if task is None:
        raise LookupError(f"no task with id {task_id}")
    name = f"human:{actor}"
    run = session.exec(
        select(Run).where(Run.benchmark_id == task.benchmark_id, Run.kind == "human", Run.name == name)
    ).first()
    if run is None:
        run = Run(
            name=name,
            benchmark_id=task.benchmark_id,
            kind="human",
            mode="atomic",
            status="running",
            started_at=utcnow(),
            config={"annotator": actor},
        )
        session.add(run)
        session.flush()
    traj = session.exec(select(Trajectory).where(Trajectory.run_id == run.id, Trajectory.task_id == task_id)).first()
    if traj is None:
        traj = Trajectory(
            run_id=run.id or 0, task_id=task_id, task_revision=task.revision, status="running", started_at=utcnow()
        )
        session.add(traj)
        session.flush()
    elif traj.status == "done":
        raise ValueError(f"{actor} already finished a blind attempt on task {task_id} (run {run.name})")
    return traj


def _next_ordinal(session: Session, trajectory_id: int) -> int:
    n = session.exec(select(sa.func.max(Event.ordinal)).where(Event.trajectory_id == trajectory_id)).one()
    return 0 if n is None else n + 1


def record_tool_call(
    session: Session,
    trajectory: Trajectory,
    name: str,
    arguments: dict[str, Any],
    ok: bool,
    text: str,
    data: dict[str, Any],
    asset_ids: list[int],
    error: str | None,
) -> None:
    """Append a tool_call and its tool_result (with produced images linked as EventAssets)."""
    n = _next_ordinal(session, trajectory.id or 0)
    call_id = f"human-{n}"
    session.add(
        Event(
            trajectory_id=trajectory.id or 0,
            ordinal=n,
            kind=ev.TOOL_CALL,
            payload=ev.tool_call(name, arguments, call_id),
            finished_at=utcnow(),
        )
    )
    extra = {"error": error} if error else {}
    result = Event(
        trajectory_id=trajectory.id or 0,
        ordinal=n + 1,
        kind=ev.TOOL_RESULT,
        failed=not ok,
        payload=ev.tool_result(name, text, call_id=call_id, ok=ok, data=data, asset_ids=asset_ids, **extra),
        finished_at=utcnow(),
    )
    session.add(result)
    session.flush()
    for i, asset_id in enumerate(asset_ids):
        session.add(EventAsset(event_id=result.id or 0, asset_id=asset_id, ordinal=i, role="output"))
    usage = dict(trajectory.usage or {})
    usage["tool_calls"] = usage.get("tool_calls", 0) + 1
    trajectory.usage = usage
    session.flush()


def finish(session: Session, trajectory: Trajectory, answer_text: str) -> None:
    """Record the final answer and close the trajectory."""
    n = _next_ordinal(session, trajectory.id or 0)
    session.add(
        Event(
            trajectory_id=trajectory.id or 0,
            ordinal=n,
            kind=ev.ANSWER,
            payload=ev.answer(answer_text),
            finished_at=utcnow(),
        )
    )
    trajectory.final_answer = answer_text
    trajectory.status = "done"
    trajectory.finished_at = utcnow()
    if trajectory.started_at is not None:
        usage = dict(trajectory.usage or {})
        usage["seconds"] = round((trajectory.finished_at - _aware(trajectory.started_at)).total_seconds(), 3)
        trajectory.usage = usage
    session.flush()


def _aware(ts: Any) -> Any:
    from datetime import timezone

    return ts if ts.tzinfo is not None else ts.replace(tzinfo=timezone.utc)
