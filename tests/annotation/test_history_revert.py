"""Revert to here: every change after a history entry to the task and its steps, checkpoints and
images is taken back from the audit trail alone, and the revert is itself history."""

from __future__ import annotations

from sqlmodel import select

from annotation import tasks as authoring
from annotation.history import RevertError, revert_task_to
from store import session_scope
from store.models import AuditEvent, Checkpoint, ReferenceStep, Task


def _state(engine, task_id: int):  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        t = s.get(Task, task_id)
        assert t is not None
        steps = [
            (st.ordinal, st.thought, st.tool_name, st.result_text)
            for st in s.exec(
                select(ReferenceStep).where(ReferenceStep.task_id == task_id).order_by(ReferenceStep.ordinal)  # type: ignore[arg-type]
            ).all()
        ]  # type: ignore[arg-type]
        cps = sorted(
            (c.key, c.axis, c.description)
            for c in s.exec(select(Checkpoint).where(Checkpoint.task_id == task_id)).all()
        )
        return (t.query, t.category, t.answer_spec), steps, cps


def _last_audit(engine) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        return int(s.exec(select(AuditEvent.id).order_by(AuditEvent.id.desc())).first() or 0)  # type: ignore[union-attr]


def test_revert_takes_back_edits_step_moves_deletes_and_checkpoints(engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "ann") as s:
        authoring.ensure_benchmark(s, "b", "gta", tool_set="gta")
        t = authoring.create_task(s, "b", "How many cups?", answer_spec={"kind": "exact", "value": "3"})
        task_id = int(t.id or 0)
        for i in range(3):
            authoring.add_step(s, task_id, thought=f"step {i}", tool_name="OCR", tool_args={}, result_text=f"r{i}")
        authoring.add_checkpoint(s, task_id, "cp1", axis="V", description="look")
    point = _last_audit(engine)
    saved = _state(engine, task_id)

    with session_scope(engine, "ann") as s:
        authoring.edit_task(
            s, task_id, query="How many mugs?", category="counting", answer_spec={"kind": "exact", "value": "4"}
        )
        steps = authoring.steps_of(s, task_id)
        authoring.move_step(s, int(steps[2].id or 0), 0)
        authoring.delete_step(s, int(steps[1].id or 0))
        authoring.add_step(s, task_id, thought="new", tool_name="Calculator", tool_args={}, result_text="4")
        cp = s.exec(select(Checkpoint).where(Checkpoint.task_id == task_id)).one()
        authoring.delete_checkpoint(s, int(cp.id or 0))
        authoring.add_checkpoint(s, task_id, "cp2", axis="S", description="search")
    assert _state(engine, task_id) != saved

    with session_scope(engine, "reviewer") as s:
        taken_back = revert_task_to(s, task_id, point)
    assert taken_back > 5
    assert _state(engine, task_id) == saved
    with session_scope(engine) as s:
        assert s.exec(
            select(AuditEvent).where(
                AuditEvent.id > point,  # type: ignore[operator]
                AuditEvent.actor == "reviewer",
            )
        ).first()


def test_a_point_before_the_task_existed_is_refused(engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "ann") as s:
        authoring.ensure_benchmark(s, "b", "gta", tool_set="gta")
        authoring.create_task(s, "b", "Another task?")
    point = _last_audit(engine)
    with session_scope(engine, "ann") as s:
        task_id = int(authoring.create_task(s, "b", "Q?").id or 0)
    with session_scope(engine, "ann") as s:
        authoring.edit_task(s, task_id, query="Q2?")
    try:
        with session_scope(engine, "ann") as s:
            revert_task_to(s, task_id, point)
        raise AssertionError("expected a refusal")
    except RevertError as exc:
        assert "before the task existed" in str(exc)
    assert _state(engine, task_id)[0][0] == "Q2?"  # nothing half-done
