"""Authoring tasks: create, edit (with revision bumps), status workflow, steps, checkpoints, assets.

All functions take an open Session (one unit of work, see ``store.db.session_scope``) and leave
auditing to the store's flush hook. Content edits bump the task's revision, so ratings made on an
older revision become stale.
"""

from __future__ import annotations

from datetime import timezone
from typing import Any, Iterable

import sqlalchemy as sa
from sqlmodel import Session, select, col

from annotation.answers import validate_answer_spec
from annotation.rules import Warning, check_task
from store.blobs import BlobStore, put_asset
from store.queries import benchmark_names, unknown_benchmark
from store.models import (
    AuditEvent,
    Benchmark,
    Checkpoint,
    Document,
    OrderingConstraint,
    ReferenceStep,
    Task,
    TaskAsset,
    utcnow,
)
from annotation.vocab import TASK_STATUSES

CONTENT_FIELDS = {
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
}
OTHER_FIELDS = {"status", "author", "source_record", "source_id"}
STATUSES = TASK_STATUSES
TRANSITIONS = {
    "draft": {"submitted"},
    "submitted": {"verified", "rejected", "draft"},
    "rejected": {"draft", "submitted"},
    "verified": {"draft"},
}


class AuthoringError(ValueError):
    """A request the authoring rules refuse; the message says why and what to do."""


def ensure_benchmark(
    session: Session,
    name: str,
    source_format: str = "chainmark",
    *,
    tool_set: str | None = None,
    description: str | None = None,
    guidelines: str | None = None,
    settings: dict[str, Any] | None = None,
) -> Benchmark:
    """Get the benchmark by name, creating it if needed; given fields overwrite stored ones."""
    bench = session.exec(select(Benchmark).where(Benchmark.name == name)).first()
    if bench is None:
        bench = Benchmark(name=name, source_format=source_format)
        session.add(bench)
    bench.source_format = source_format or bench.source_format
    if tool_set is not None:
        bench.tool_set = tool_set
    if description is not None:
        bench.description = description
    if guidelines is not None:
        bench.guidelines = guidelines
    if settings is not None:
        bench.settings = settings
    session.flush()
    return bench


class UnknownToolSet(AuthoringError):
    """A tool set no plugin defines (``chainmark tools list`` names the known ones)."""


def benchmark_tool_sets() -> list[str]:
    """The tool sets a benchmark can use: every plugin's, in listing order (the tool-set registry)."""
    from store.plugins import tool_set_names

    return tool_set_names()


def default_tool_set(source_format: str) -> str | None:
    """The tool set a new benchmark of this format gets unless told otherwise: the one its plugin names."""
    from store.plugins import find_plugin

    plugin = find_plugin(source_format)
    if plugin is not None and plugin.tool_set in benchmark_tool_sets():
        return plugin.tool_set
    return None


def create_benchmark(
    session: Session,
    name: str,
    source_format: str,
    *,
    tool_set: str | None = None,
    description: str | None = None,
    guidelines: str | None = None,
) -> Benchmark:
    """Make a new benchmark on purpose: refuses a name already taken (``ensure_benchmark`` would
    quietly reuse it), a format chainmark cannot read or write and a tool set no plugin defines. Without
    a tool set it gets its format's (``default_tool_set``). The CLI and the TUI's form both call this."""
    from annotation.formats.registry import benchmark_formats

    name = name.strip()
    if not name:
        raise AuthoringError("a benchmark needs a name")
    if session.exec(select(Benchmark).where(Benchmark.name == name)).first() is not None:
        raise AuthoringError(f"a benchmark named {name!r} already exists")
    formats = benchmark_formats()
    if source_format not in formats:
        raise AuthoringError(f"format must be one of {', '.join(formats)}; got {source_format!r}")
    sets = benchmark_tool_sets()
    if tool_set is not None and tool_set not in sets:
        raise UnknownToolSet(f"unknown tool set {tool_set!r}; known: {', '.join(sets)}")
    bench = Benchmark(
        name=name,
        source_format=source_format,
        tool_set=tool_set if tool_set is not None else default_tool_set(source_format),
        description=description or None,
        guidelines=guidelines or None,
    )
    session.add(bench)
    session.flush()
    return bench


def get_benchmark(session: Session, name: str) -> Benchmark:
    bench = session.exec(select(Benchmark).where(Benchmark.name == name)).first()
    if bench is None:
        raise AuthoringError(unknown_benchmark(name, benchmark_names(session)))
    return bench


def _numbered_ids(source_format: str) -> bool:
    """True when the benchmark's format keys its records by integers (GTA's loader reads ``int(key)``):
    its authored tasks are then numbered 0, 1, … so they export as records the reference reads."""
    from annotation.formats.registry import get_format

    try:
        return bool(getattr(get_format(source_format), "numbered_ids", False))
    except LookupError:  # chainmark's own format, or one this version does not know
        return False


def _next_source_id(session: Session, bench: Benchmark) -> str:
    benchmark_id = bench.id or 0
    n = session.exec(select(sa.func.count()).select_from(Task).where(Task.benchmark_id == benchmark_id)).one()
    numbered = _numbered_ids(bench.source_format)
    n -= numbered  # numbered ids start at 0
    while True:
        n += 1
        candidate = str(n) if numbered else f"cm-{n:05d}"
        clash = session.exec(
            select(Task.id).where(Task.benchmark_id == benchmark_id, Task.source_id == candidate)
        ).first()
        if clash is None:
            return candidate


def create_task(
    session: Session,
    benchmark: Benchmark | str,
    query: str,
    *,
    answer_spec: dict[str, Any] | None = None,
    source_id: str | None = None,
    author: str | None = None,
    **fields: Any,
) -> Task:
    """Create a draft task; the answer spec is validated (``AnswerSpecError`` names the field)."""
    bench = get_benchmark(session, benchmark) if isinstance(benchmark, str) else benchmark
    if not query or not query.strip():
        raise AuthoringError("a task needs a query")
    spec = validate_answer_spec(answer_spec or {"kind": "none"})
    unknown = set(fields) - CONTENT_FIELDS - OTHER_FIELDS
    if unknown:
        raise AuthoringError(f"unknown task field(s): {', '.join(sorted(unknown))}")
    if "tools_offered" in fields:
        fields["tools_offered"] = tool_list(fields["tools_offered"])
    status = fields.pop("status", "draft")
    if status not in STATUSES:
        raise AuthoringError(f"status must be one of {', '.join(STATUSES)}; got {status!r}")
    task = Task(
        benchmark_id=bench.id or 0,
        source_id=source_id or _next_source_id(session, bench),
        query=query,
        answer_spec=spec,
        author=author or session.info.get("actor"),
        status=status,
        **fields,
    )
    session.add(task)
    session.flush()
    session.info.setdefault("_created_tasks", set()).add(task.id)
    return task


def tool_list(names: Any) -> list[str]:
    """A task's ``tools_offered`` as stored: tool names, each once, in the order given. Which names the
    benchmark's tool set has is checked above this layer, where the tool sets are (the CLI, the TUI)."""
    if names is None:
        return []
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise AuthoringError("tools_offered must be a list of tool names")
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise AuthoringError(f"tools_offered: {name!r} is not a tool name")
        if name.strip() not in out:
            out.append(name.strip())
    return out


def get_task(session: Session, task_id: int, *, for_update: bool = False) -> Task:
    """The task; ``for_update`` locks its row until the transaction ends (on PostgreSQL: two editors
    that read and then write the same task are serialised, so no check is made on a stale read and no
    revision is counted twice; SQLite's writers are serialised already)."""
    task = session.get(Task, task_id, with_for_update=for_update or None, populate_existing=for_update)
    if task is None:
        raise AuthoringError(f"no task with id {task_id}")
    return task


class FieldConflict(AuthoringError):
    """Someone else changed a field this edit also changes, after the editor read it."""

    def __init__(self, field: str, base: Any, theirs: Any, mine: Any, who: str) -> None:
        super().__init__(f"{field} was changed by {who} while you edited it")
        self.field, self.base, self.theirs, self.mine, self.who = field, base, theirs, mine, who


def _same(a: Any, b: Any) -> bool:
    """Equal as an editor shows them (an empty field and a missing value are the same)."""
    return (a in (None, "") and b in (None, "")) or a == b


def edit_unless_changed(
    session: Session, task_id: int, changes: dict[str, Any], base: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """Optimistic concurrency for task fields: apply ``changes`` unless a field's stored value moved
    away from ``base`` (what the editor started from) to something else, in which case nothing is
    written and ``FieldConflict`` says who changed it and to what. Fields nobody else touched merge.
    Returns the values before the edit (for undo), or None when nothing changed."""
    task = get_task(session, task_id, for_update=True)
    before = {k: getattr(task, k) for k in changes}
    for k, mine in changes.items():
        if base is not None and k in base and not _same(before[k], base[k]) and not _same(before[k], mine):
            raise FieldConflict(k, base[k], before[k], mine, last_editor_of(session, task_id, k))
    if all(before[k] == v for k, v in changes.items()):
        return None
    edit_task(session, task_id, **changes)
    return before


def last_editor_of(session: Session, task_id: int, field: str) -> str:
    """Who last changed ``field`` of the task, from the audit trail ("someone" when unknown)."""
    events = session.exec(
        select(AuditEvent)
        .where(AuditEvent.entity == "task", AuditEvent.entity_id == task_id)
        .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
        .limit(50)
    ).all()
    for e in events:
        if (e.before or {}).get(field) != (e.after or {}).get(field):
            return e.actor or "someone"
    return "someone"


EDIT_SESSION_IDLE_S = 30 * 60  # a pause longer than this starts a new revision even in one editor visit


def _continues_edit_session(task: Task, session: Session | None, previous_edit: Any) -> bool:
    """True when this save belongs to the revision the same editing session already made: same session
    key (one visit of an editor screen, ``session.info["edit_session"]``), a recent last edit, and
    nothing recorded against that revision yet (a run, a rating or a preference must keep seeing what it saw)."""
    key = session.info.get("edit_session") if session is not None else None
    if session is None or not key or task.edit_session != key or task.id is None:
        return False
    if previous_edit is None:
        return False
    last = previous_edit if previous_edit.tzinfo else previous_edit.replace(tzinfo=timezone.utc)
    if (utcnow() - last).total_seconds() > EDIT_SESSION_IDLE_S:
        return False
    from store.models import HumanRating, Preference, Trajectory

    for model in (Trajectory, HumanRating, Preference):
        used = session.exec(
            select(model.id).where(model.task_id == task.id, model.task_revision == task.revision).limit(1)
        ).first()
        if used is not None:
            return False
    return True


def bump_revision(task: Task, session: Session | None = None, *, keep_status: bool = False) -> None:
    """Count a content edit. Edits made in the same unit of work that created the task are part of
    its first revision (building a task step by step is not editing it).

    A submitted or verified task that is edited goes back to draft, with the reason on the task
    (``review_note``): what a reviewer accepted is no longer what the task says."""
    previous_edit = task.updated_at
    task.updated_at = utcnow()
    if session is not None and task.id in session.info.get("_created_tasks", set()):
        return
    if not _continues_edit_session(task, session, previous_edit):
        task.revision = (task.revision or 0) + 1
        task.edit_session = session.info.get("edit_session") if session is not None else None
    if not keep_status and task.status in ("submitted", "verified"):
        previous = task.status
        task.status = "draft"
        _note_review(task, session, "draft", f"edited after it was {previous} (revision {task.revision})")


SELF_VERIFICATION_SETTING = "allow_self_verification"
"""Benchmark setting (``settings[...]``): may the author of a task verify it? Off unless set true."""


def _note_review(task: Task, session: Session | None, status: str, reason: str | None) -> None:
    """Keep the latest review decision and its reason on the task, where the editor shows it."""
    actor = session.info.get("actor") if session is not None else None
    task.meta = {
        **(task.meta or {}),
        "review": {"status": status, "reason": reason, "by": actor, "at": utcnow().isoformat(timespec="seconds")},
    }


def review_note(task: Task) -> dict[str, Any] | None:
    """The latest review decision on the task (status, reason, by, at), if any."""
    note = (task.meta or {}).get("review")
    return note if isinstance(note, dict) else None


def _check_review(session: Session, task: Task, new: str, reason: str | None) -> None:
    """The review rules on top of the transitions: a rejection says why; nobody verifies their own
    task unless the benchmark allows it."""
    if new == task.status:
        return
    if new == "rejected" and not (reason or "").strip():
        raise AuthoringError("rejecting a task needs a reason (what the author should fix)")
    if new == "verified":
        actor = session.info.get("actor")
        bench = session.get(Benchmark, task.benchmark_id)
        allowed = bool(((bench.settings if bench else None) or {}).get(SELF_VERIFICATION_SETTING))
        if actor and actor == task.author and not allowed:
            raise AuthoringError(
                f"{actor} wrote this task, so someone else must verify it "
                f"(or set the benchmark setting {SELF_VERIFICATION_SETTING})"
            )


def edit_task(session: Session, task_id: int, *, reason: str | None = None, **changes: Any) -> Task:
    """Apply field changes; any change to content bumps the revision exactly once. ``reason``
    explains a status change (required to reject) and is kept on the task."""
    task = get_task(session, task_id, for_update=True)
    unknown = set(changes) - CONTENT_FIELDS - OTHER_FIELDS
    if unknown:
        raise AuthoringError(f"unknown task field(s): {', '.join(sorted(unknown))}")
    if "answer_spec" in changes:
        validate_answer_spec(changes["answer_spec"])
    if "tools_offered" in changes:
        changes["tools_offered"] = tool_list(changes["tools_offered"])
    if "query" in changes and not str(changes["query"] or "").strip():
        raise AuthoringError("a task needs a query")
    if "status" in changes:
        _check_transition(task.status, changes["status"])
        _check_review(session, task, changes["status"], reason)
    status_before = task.status
    content_changed = False
    for key, value in changes.items():
        if getattr(task, key) != value:
            setattr(task, key, value)
            content_changed |= key in CONTENT_FIELDS
    if content_changed:
        bump_revision(task, session, keep_status="status" in changes)
    else:
        task.updated_at = utcnow()
    if "status" in changes and task.status != status_before:
        _note_review(task, session, task.status, reason)
    session.flush()
    return task


def _check_transition(current: str, new: str) -> None:
    if new not in STATUSES:
        raise AuthoringError(f"status must be one of {', '.join(STATUSES)}; got {new!r}")
    if new != current and new not in TRANSITIONS.get(current, set()):
        allowed = ", ".join(sorted(TRANSITIONS.get(current, set()))) or "nothing"
        raise AuthoringError(f"a {current} task can move to {allowed}, not {new}")


def set_status(session: Session, task_id: int, status: str, reason: str | None = None) -> Task:
    """Move the task along the review workflow; ``reason`` is required to reject."""
    return edit_task(session, task_id, status=status, reason=reason)


# ------------------------------------------------------------------ reference chain


def steps_of(session: Session, task_id: int) -> list[ReferenceStep]:
    return list(
        session.exec(
            select(ReferenceStep).where(ReferenceStep.task_id == task_id).order_by(col(ReferenceStep.ordinal))
        ).all()
    )


def add_step(
    session: Session,
    task_id: int,
    *,
    thought: str | None = None,
    tool_name: str | None = None,
    tool_args: Any = None,
    result_text: str | None = None,
    result: Any = None,
    final_answer: str | None = None,
    ordinal: int | None = None,
    meta: dict[str, Any] | None = None,
) -> ReferenceStep:
    """Append (or insert at ``ordinal``) a step; a step with ``final_answer`` is the final step."""
    task = get_task(session, task_id)
    existing = steps_of(session, task_id)
    if tool_name is None and final_answer is None:
        raise AuthoringError("a step is a tool call (tool_name) or the final answer (final_answer)")
    if final_answer is not None and any(s.is_final for s in existing):
        raise AuthoringError("the chain already has a final answer step; edit that one")
    position = len(existing) if ordinal is None else max(0, min(ordinal, len(existing)))
    if existing and existing[-1].is_final and final_answer is None and position == len(existing):
        position = len(existing) - 1  # tool steps go before the final answer
    _shift(session, existing[position:], +1)
    step = ReferenceStep(
        task_id=task_id,
        ordinal=position,
        thought=thought,
        tool_name=tool_name,
        tool_args=tool_args,
        result_text=result_text,
        result=result,
        is_final=final_answer is not None,
        final_answer=final_answer,
        recorded_by=session.info.get("actor"),
        meta=meta or {},
    )
    session.add(step)
    bump_revision(task, session)
    session.flush()
    return step


def _shift(session: Session, steps: list[ReferenceStep], delta: int) -> None:
    """Move steps by ``delta`` without tripping the (task, ordinal) unique constraint midway."""
    if not steps:
        return
    for s in steps:
        s.ordinal = -(s.ordinal + 1000)
    session.flush()
    for s in steps:
        s.ordinal = -s.ordinal - 1000 + delta
    session.flush()


def edit_step(session: Session, step_id: int, **changes: Any) -> ReferenceStep:
    step = session.get(ReferenceStep, step_id)
    if step is None:
        raise AuthoringError(f"no step with id {step_id}")
    allowed = {"thought", "tool_name", "tool_args", "result_text", "result", "final_answer", "meta"}
    unknown = set(changes) - allowed
    if unknown:
        raise AuthoringError(f"unknown step field(s): {', '.join(sorted(unknown))}")
    for k, v in changes.items():
        setattr(step, k, v)
    bump_revision(get_task(session, step.task_id), session)
    session.flush()
    return step


def delete_step(session: Session, step_id: int) -> dict[str, Any]:
    """Delete a step; returns everything ``restore_step`` needs to bring it back whole (its result,
    and the checkpoints and image links that pointed at it)."""
    step = session.get(ReferenceStep, step_id)
    if step is None:
        raise AuthoringError(f"no step with id {step_id}")
    task_id = step.task_id
    snapshot: dict[str, Any] = {
        "task_id": task_id,
        "ordinal": step.ordinal,
        "thought": step.thought,
        "tool_name": step.tool_name,
        "tool_args": step.tool_args,
        "result_text": step.result_text,
        "result": step.result,
        "final_answer": step.final_answer if step.is_final else None,
        "meta": dict(step.meta or {}),
        "checkpoint_ids": [],
        "task_asset_ids": [],
    }
    for cp in session.exec(select(Checkpoint).where(Checkpoint.step_id == step_id)).all():
        snapshot["checkpoint_ids"].append(cp.id)
        cp.step_id = None
    for link in session.exec(select(TaskAsset).where(TaskAsset.step_id == step_id)).all():
        snapshot["task_asset_ids"].append(link.id)
        link.step_id = None
    session.delete(step)
    session.flush()
    later = [s for s in steps_of(session, task_id) if s.ordinal > step.ordinal]
    _shift(session, later, -1)
    bump_revision(get_task(session, task_id), session)
    session.flush()
    return snapshot


def restore_step(session: Session, snapshot: dict[str, Any]) -> ReferenceStep:
    """Undo ``delete_step``: the step at its place with its result, and its checkpoints and image
    links pointing at it again (those still there and not re-linked meanwhile)."""
    step = add_step(
        session,
        snapshot["task_id"],
        thought=snapshot["thought"],
        tool_name=snapshot["tool_name"],
        tool_args=snapshot["tool_args"],
        result_text=snapshot["result_text"],
        result=snapshot["result"],
        final_answer=snapshot["final_answer"],
        ordinal=snapshot["ordinal"],
        meta=snapshot["meta"],
    )
    session.flush()
    for cp_id in snapshot["checkpoint_ids"]:
        cp = session.get(Checkpoint, cp_id)
        if cp is not None and cp.step_id is None:
            cp.step_id = step.id
    for link_id in snapshot["task_asset_ids"]:
        link = session.get(TaskAsset, link_id)
        if link is not None and link.step_id is None:
            link.step_id = step.id
    session.flush()
    return step


def move_step(session: Session, step_id: int, new_ordinal: int) -> list[ReferenceStep]:
    """Reorder: move one step to ``new_ordinal``; returns the chain in its new order."""
    step = session.get(ReferenceStep, step_id)
    if step is None:
        raise AuthoringError(f"no step with id {step_id}")
    chain = steps_of(session, step.task_id)
    chain.remove(step)
    chain.insert(max(0, min(new_ordinal, len(chain))), step)
    if any(s.is_final for s in chain[:-1]):
        raise AuthoringError("the final answer comes after every tool step; it cannot move above one")
    for s in chain:
        s.ordinal = -(s.ordinal + 1000)
    session.flush()
    for i, s in enumerate(chain):
        s.ordinal = i
    bump_revision(get_task(session, step.task_id), session)
    session.flush()
    return chain


# ------------------------------------------------------------------ checkpoints


CHECKPOINT_FIELDS = {
    "step_id",
    "parent_id",
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
    "meta",
}


def _check_shapes(fields: dict[str, Any]) -> None:
    """Each check has the shape ``store.schemas`` defines (``chainmark schema checkpoints``)."""
    from pydantic import ValidationError

    from store.schemas import CheckpointChecks, field_path

    checks = {k: v for k, v in fields.items() if k.endswith("_check") and v is not None}
    if not checks:
        return
    try:
        CheckpointChecks.model_validate({"key": "-", **checks})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise AuthoringError(f"checkpoint {field_path(err['loc'])}: {err['msg'][0].lower()}{err['msg'][1:]}") from None


def add_checkpoint(session: Session, task_id: int, key: str | None = None, **fields: Any) -> Checkpoint:
    task = get_task(session, task_id)
    unknown = set(fields) - CHECKPOINT_FIELDS
    if unknown:
        raise AuthoringError(f"unknown checkpoint field(s): {', '.join(sorted(unknown))}")
    _check_shapes(fields)
    axis = fields.get("axis", "V")
    if not axis:
        raise AuthoringError("a checkpoint needs an axis (S, V, R or a custom name)")
    existing = session.exec(select(Checkpoint).where(Checkpoint.task_id == task_id)).all()
    if key is None:
        key = f"cp{len(existing) + 1}"
    if any(c.key == key for c in existing):
        raise AuthoringError(f"checkpoint key {key!r} is already used on this task")
    fields.setdefault("ordinal", len(existing))
    cp = Checkpoint(task_id=task_id, key=key, **fields)
    session.add(cp)
    bump_revision(task, session)
    session.flush()
    return cp


def checkpoints_of(session: Session, task_id: int) -> list[Checkpoint]:
    return list(
        session.exec(
            select(Checkpoint)
            .where(Checkpoint.task_id == task_id)
            .order_by(col(Checkpoint.ordinal), col(Checkpoint.id))
        ).all()
    )


def edit_checkpoint(session: Session, checkpoint_id: int, **changes: Any) -> Checkpoint:
    cp = session.get(Checkpoint, checkpoint_id)
    if cp is None:
        raise AuthoringError(f"no checkpoint with id {checkpoint_id}")
    unknown = set(changes) - CHECKPOINT_FIELDS - {"key"}
    if unknown:
        raise AuthoringError(f"unknown checkpoint field(s): {', '.join(sorted(unknown))}")
    _check_shapes(changes)
    for k, v in changes.items():
        setattr(cp, k, v)
    bump_revision(get_task(session, cp.task_id), session)
    session.flush()
    return cp


def add_ordering_constraint(
    session: Session, task_id: int, sequence: list[str], max_gap: int | None = None, key: str | None = None
) -> OrderingConstraint:
    keys = {c.key for c in checkpoints_of(session, task_id)}
    missing = [k for k in sequence if k not in keys]
    if missing:
        raise AuthoringError(f"ordering constraint names unknown checkpoint(s): {', '.join(missing)}")
    if len(sequence) < 2:
        raise AuthoringError("an ordering constraint needs at least two checkpoints")
    used = set(session.exec(select(OrderingConstraint.key).where(OrderingConstraint.task_id == task_id)).all())
    if key is not None and key in used:
        raise AuthoringError(f"ordering constraint key {key!r} is already used on this task")
    n = len(used) + 1
    while key is None and f"order{n}" in used:
        n += 1
    oc = OrderingConstraint(task_id=task_id, key=key or f"order{n}", sequence=sequence, max_gap=max_gap)
    session.add(oc)
    bump_revision(get_task(session, task_id), session)
    session.flush()
    return oc


def delete_checkpoint(session: Session, checkpoint_id: int) -> dict[str, Any]:
    """Remove a checkpoint; returns its fields (``add_checkpoint(**them)`` restores it).

    Refused while an ordering constraint names it (the constraint would silently change meaning)
    or while runs have scored it (their results point at it)."""
    from store.models import CheckpointResult

    cp = session.get(Checkpoint, checkpoint_id)
    if cp is None:
        raise AuthoringError(f"no checkpoint with id {checkpoint_id}")
    orders = [
        o.key
        for o in session.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == cp.task_id)).all()
        if cp.key in (o.sequence or [])
    ]
    if orders:
        raise AuthoringError(f"checkpoint {cp.key} is in ordering constraint {', '.join(orders)}; delete that first")
    scored = session.exec(
        select(sa.func.count()).select_from(CheckpointResult).where(CheckpointResult.checkpoint_id == checkpoint_id)
    ).one()
    if scored:
        raise AuthoringError(f"checkpoint {cp.key} has {scored} scored result(s) from runs; it cannot be deleted")
    snapshot = {"task_id": cp.task_id, "key": cp.key, **{k: getattr(cp, k) for k in CHECKPOINT_FIELDS}}
    for child in session.exec(select(Checkpoint).where(Checkpoint.parent_id == checkpoint_id)).all():
        child.parent_id = None
    session.delete(cp)
    bump_revision(get_task(session, snapshot["task_id"]), session)
    session.flush()
    return snapshot


def delete_ordering_constraint(session: Session, task_id: int, key: str) -> dict[str, Any]:
    """Remove the task's ordering constraint ``key``; returns what ``add_ordering_constraint`` needs."""
    oc = session.exec(
        select(OrderingConstraint).where(OrderingConstraint.task_id == task_id, OrderingConstraint.key == key)
    ).first()
    if oc is None:
        raise AuthoringError(f"task {task_id} has no ordering constraint {key!r}")
    snapshot = {"task_id": task_id, "sequence": list(oc.sequence or []), "max_gap": oc.max_gap, "key": oc.key}
    session.delete(oc)
    bump_revision(get_task(session, task_id), session)
    session.flush()
    return snapshot


# ------------------------------------------------------------------ assets and documents


IMAGE_ROLES = {"query_image", "document_image", "artifact"}
"""Roles whose bytes a tool or a model will open as a picture: anything else is refused on attach."""


def image_mime(data: bytes, what: str) -> str:
    """The MIME type of an image Pillow can read; ``AuthoringError`` (naming ``what``) otherwise."""
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.verify()
            fmt = im.format
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise AuthoringError(f"{what} is not an image (Pillow cannot read it: {exc})") from None
    return Image.MIME.get(fmt or "", "application/octet-stream")


def attach_asset(
    session: Session,
    blobs: BlobStore,
    task_id: int,
    data: bytes,
    *,
    role: str = "query_image",
    original_path: str | None = None,
    url: str | None = None,
    step_id: int | None = None,
    document_id: int | None = None,
    mime: str | None = None,
) -> TaskAsset:
    task = get_task(session, task_id)
    if role in IMAGE_ROLES:
        mime = image_mime(data, original_path or role)
    asset = put_asset(session, blobs, data, mime)
    n = session.exec(
        select(sa.func.count()).select_from(TaskAsset).where(TaskAsset.task_id == task_id, TaskAsset.role == role)
    ).one()
    link = TaskAsset(
        task_id=task_id,
        asset_id=asset.id or 0,
        role=role,
        ordinal=n,
        original_path=original_path,
        url=url,
        step_id=step_id,
        document_id=document_id,
    )
    session.add(link)
    if role in ("query_image", "document_image"):
        bump_revision(task, session)
    session.flush()
    return link


def assets_of(session: Session, task_id: int, role: str | None = None) -> list[TaskAsset]:
    stmt = select(TaskAsset).where(TaskAsset.task_id == task_id)
    if role:
        stmt = stmt.where(TaskAsset.role == role)
    return list(session.exec(stmt.order_by(col(TaskAsset.role), col(TaskAsset.ordinal))).all())


def add_document(
    session: Session, task_id: int, text: str, *, title: str | None = None, meta: dict[str, Any] | None = None
) -> Document:
    task = get_task(session, task_id)
    n = session.exec(select(sa.func.count()).select_from(Document).where(Document.task_id == task_id)).one()
    doc = Document(task_id=task_id, ordinal=n, title=title, text=text, meta=meta or {})
    session.add(doc)
    bump_revision(task, session)
    session.flush()
    return doc


# ------------------------------------------------------------------ validation


def task_warnings(session: Session, task_id: int, style: str | None = None) -> list[Warning]:
    task = get_task(session, task_id)
    bench = session.get(Benchmark, task.benchmark_id)
    steps: Iterable[ReferenceStep] = steps_of(session, task_id)
    return check_task(
        task.query,
        task.answer_spec or {},
        [{"tool_name": s.tool_name, "is_final": s.is_final} for s in steps],
        image_count=len(assets_of(session, task_id, "query_image")),
        evidence_count=len(assets_of(session, task_id, "evidence")),
        style=style or (bench.source_format if bench else "gta"),
        tools_offered=task.tools_offered or (),
    )
