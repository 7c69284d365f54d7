"""Save functions for a task's fields, shared by the task editor and the checkpoint editor (which
edits the task's efficiency fields): in a module of their own so neither editor imports the other."""

from __future__ import annotations

from typing import Any

from annotation import tasks as authoring
from tui.undo import Edit


def edit_fields(  # type: ignore[no-untyped-def]
    task_id: int,
    changes: dict[str, Any],
    label: str,
    base: dict[str, Any] | None = None,
):
    """A save function: apply ``changes`` to the task (``authoring.edit_unless_changed``: with ``base``,
    a field someone else changed meanwhile raises ``FieldConflict`` instead of being overwritten);
    its undo restores the previous values."""

    def apply(session):  # type: ignore[no-untyped-def]
        before = authoring.edit_unless_changed(session, task_id, changes, base)
        return (
            None
            if before is None
            else Edit(label, "edit_task", {"task_id": task_id, "fields": before, "after": dict(changes)})
        )

    return apply
