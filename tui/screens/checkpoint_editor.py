"""Checkpoint editor: S/V/R checkpoints on a task's chain, ordering constraints, efficiency reference.

Opened from the task editor (all checkpoints) or from a step in the chain builder (the new
checkpoint is tied to that step, and a V checkpoint takes the step's artifact as ground truth).
The form keeps what was typed on every error and asks before it is dropped (escape, new, or
opening another checkpoint); saving clears it only once the save has landed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Label, OptionList, Select, Static
from tui.widgets.header import Header
from textual.widgets.option_list import Option

from annotation import tasks as authoring
from tui.typed_keys import after_typed_keys
from tui.undo import Edit, made_row
from tui.data import CheckpointView, TaskDetail, task_detail
from tui.messages import Failed, Saved, TaskDetailLoaded
from tui.screens.base import WorkScreen
from tui.screens.task_edits import edit_fields
from tui.widgets.footer import KeyFooter
from tui.widgets.selection import choose, chosen, data_options
from tui.safe_text import data_content, one_line
from tui.widgets.data_input import DataInput

AXES = ("S", "V", "R")
MATCH_TYPES = ("exact", "contains", "numeric", "whitelist", "regex", "mcq")
TEXT_FIELDS = [
    ("key", "key"),
    ("description", "description"),
    ("tools", "expected tools (comma)"),
    ("code_tool", "code tool (the op the code must use)"),
    ("code_verifier", "code verifier (e.g. require_op:crop)"),
    ("v_question", "visual question"),
    ("v_answer", "visual expected answer"),
    ("s_keywords", "search keywords (comma)"),
    ("s_urls", "search URLs (comma)"),
    ("s_answer", "search expected answer"),
    ("a_target", "answer target"),
    ("a_tolerance", "answer tolerance"),
    ("a_keywords", "answer keywords (comma)"),
    ("weight", "weight"),
]
LABELS = {  # what fits the form's 13-cell label column whole (the placeholder keeps the full wording)
    "tools": "tools",
    "v_question": "visual Q",
    "v_answer": "visual answer",
    "s_keywords": "search words",
    "s_answer": "search answer",
    "a_tolerance": "answer tol.",
    "a_keywords": "answer words",
}


def _csv(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def checkpoint_fields(
    values: dict[str, str], axis: str, step_id: int | None, gt_asset_id: int | None, match_type: str | None
) -> dict[str, Any]:
    """Form texts → ``add_checkpoint`` fields; empty checks stay None so scorers skip them."""
    out: dict[str, Any] = {
        "axis": axis,
        "step_id": step_id,
        "description": values.get("description") or None,
        "tools": _csv(values.get("tools", "")),
        "gt_asset_id": gt_asset_id,
    }
    if values.get("code_tool") or values.get("code_verifier"):
        out["code_check"] = {k: values[f"code_{k}"] for k in ("tool", "verifier") if values.get(f"code_{k}")}
    else:
        out["code_check"] = None
    if values.get("v_question") or values.get("v_answer"):
        out["visual_check"] = {"question": values.get("v_question", ""), "expected_answer": values.get("v_answer", "")}
    else:
        out["visual_check"] = None
    if values.get("s_keywords") or values.get("s_urls") or values.get("s_answer"):
        out["search_check"] = {
            "keywords": _csv(values.get("s_keywords", "")),
            "urls": _csv(values.get("s_urls", "")),
            "expected_answer": values.get("s_answer", ""),
        }
    else:
        out["search_check"] = None
    if values.get("a_target"):
        check: dict[str, Any] = {"match_type": match_type or "exact", "target": values["a_target"]}
        if values.get("a_tolerance"):
            try:
                check["tolerance"] = float(values["a_tolerance"])
            except ValueError as exc:
                raise ValueError(f"answer tolerance must be a number, got {values['a_tolerance']!r}") from exc
        if values.get("a_keywords"):
            check["keywords"] = _csv(values["a_keywords"])
        out["answer_check"] = check
    else:
        out["answer_check"] = None
    weight = values.get("weight") or "1"
    try:
        out["weight"] = float(weight)
    except ValueError as exc:
        raise ValueError(f"weight must be a number, got {weight!r}") from exc
    return out


def values_of(cp: CheckpointView) -> dict[str, str]:
    v, s, a = cp.visual_check or {}, cp.search_check or {}, cp.answer_check or {}
    c = cp.code_check or {}
    return {
        "key": cp.key,
        "description": cp.description,
        "tools": ", ".join(cp.tools),
        "code_tool": str(c.get("tool") or ""),
        "code_verifier": str(c.get("verifier") or ""),
        "v_question": v.get("question", ""),
        "v_answer": v.get("expected_answer", ""),
        "s_keywords": ", ".join(s.get("keywords") or []),
        "s_urls": ", ".join(s.get("urls") or []),
        "s_answer": s.get("expected_answer", ""),
        "a_target": str(a.get("target", "")),
        "a_tolerance": "" if a.get("tolerance") is None else f"{a['tolerance']:g}",
        "a_keywords": ", ".join(a.get("keywords") or []),
        "weight": f"{cp.weight:g}",
    }


class CheckpointList(OptionList):
    """The task's checkpoints; enter opens one in the form, delete removes it (ctrl+z restores)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "screen.delete_checkpoint", "Delete checkpoint", id="checkpoint_list.delete_checkpoint")
    ]


class OrderingList(OptionList):
    """The task's ordering constraints; delete removes the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "screen.delete_ordering", "Delete ordering", id="ordering_list.delete_ordering")
    ]


class CheckpointEditorScreen(WorkScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="checkpoint_editor.back"),
        Binding(
            "ctrl+s",
            "save_checkpoint",
            "Save",
            tooltip="Save checkpoint",
            priority=True,
            id="checkpoint_editor.save_checkpoint",
        ),
        Binding(
            "ctrl+n",
            "new_checkpoint",
            "New",
            tooltip="New checkpoint",
            priority=True,
            id="checkpoint_editor.new_checkpoint",
        ),
        Binding(
            "ctrl+o",
            "add_ordering",
            "Order",
            tooltip="Add ordering",
            priority=True,
            id="checkpoint_editor.add_ordering",
        ),
        Binding(
            "ctrl+f",
            "save_efficiency",
            "Efficiency",
            tooltip="Save efficiency",
            priority=True,
            id="checkpoint_editor.save_efficiency",
        ),
    ]

    def __init__(self, task_id: int, step_id: int | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.step_id = step_id
        self.detail: TaskDetail | None = None
        self.editing: int | None = None  # checkpoint id being edited, None for a new one
        self._baseline: dict[str, Any] = {}  # the form as last loaded or saved (what "unchanged" means)
        self._saved_state: dict[str, Any] | None = None  # the form as it was when ctrl+s was pressed
        self._after_save: int | None = None  # id of the checkpoint just saved, until the reload lands
        self._opened: tuple[Any, ...] | None = None  # the open checkpoint as stored when opened or saved here
        self._overwrite = False  # after a conflict, the next save overwrites on purpose

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="builder-body"):
            with Vertical(id="builder-left"):
                yield Static("Checkpoints", classes="section-title")
                yield CheckpointList(id="checkpoint-list")
                yield Static("Orderings", classes="section-title")
                yield OrderingList(id="ordering-list")
            with VerticalScroll(id="checkpoint-form"):
                yield Static("", id="form-title", classes="section-title")
                with Horizontal(classes="field-row"):
                    yield Label("axis")
                    yield Select([(a, a) for a in AXES], value="V", allow_blank=False, id="axis")
                with Horizontal(classes="field-row"):
                    yield Label("step")
                    yield Select([], id="step")
                with Horizontal(classes="field-row"):
                    yield Label("GT artifact")
                    yield Select([], id="gt")
                with Horizontal(classes="field-row"):
                    yield Label("answer match")
                    yield Select([(m, m) for m in MATCH_TYPES], id="match")
                for name, label in TEXT_FIELDS:
                    with Horizontal(classes="field-row"):
                        yield Label(LABELS.get(name, label.split(" (")[0]))
                        yield DataInput(placeholder=label, id=f"cp-{name}")
                yield Static("Ordering constraint (ctrl+o)", classes="section-title")
                with Horizontal(classes="field-row"):
                    yield Label("sequence")
                    yield Input(placeholder="checkpoint keys in order, e.g. cp1 > cp2", id="order-seq")
                with Horizontal(classes="field-row"):
                    yield Label("max gap")
                    yield Input(placeholder="events allowed between neighbours (empty: any)", id="order-gap")
                yield Static("Efficiency reference (ctrl+f)", classes="section-title")
                for name, label in EFFICIENCY_FIELDS:
                    with Horizontal(classes="field-row"):
                        yield Label(label)
                        yield DataInput(id=f"eff-{name}")
        yield KeyFooter()

    def refresh_data(self) -> None:
        task_id = self.task_id
        self.fetch(TaskDetailLoaded, lambda s: TaskDetailLoaded(task_detail(s, task_id, with_history=False)))

    @on(TaskDetailLoaded)
    def loaded(self, message: TaskDetailLoaded) -> None:
        first = self.detail is None
        d: TaskDetail = message.detail
        self.detail = d
        self.sub_title = f"task {d.id} · checkpoints"
        cps = self.query_one("#checkpoint-list", OptionList)
        highlighted = cps.highlighted
        cps.clear_options()
        cps.add_options(
            [
                Option(data_content(f"{c.key} [{c.axis}] {one_line(c.description, 24)}"), id=str(c.id))
                for c in d.checkpoints
            ]
        )
        if d.checkpoints:
            cps.highlighted = min(highlighted or 0, len(d.checkpoints) - 1)
        orders = self.query_one("#ordering-list", OptionList)
        orders.clear_options()
        orders.add_options(
            [
                Option(data_content(f"{k}: {' > '.join(seq)}" + (f" (gap ≤ {g})" if g is not None else "")), id=k)
                for k, seq, g in d.orderings
            ]
        )
        step, gt = chosen(self.query_one("#step", Select)), chosen(self.query_one("#gt", Select))
        with self.prevent(Select.Changed):
            self.query_one("#step", Select).set_options(
                data_options((f"{s.ordinal + 1}. {s.tool_name or 'answer'}", s.id) for s in d.steps)
            )
            self.query_one("#gt", Select).set_options(
                data_options((f"{a.label} (asset {a.asset_id})", a.asset_id) for a in d.artifacts)
            )
            choose(self.query_one("#step", Select), step)
            choose(self.query_one("#gt", Select), gt)
        if first:
            for name, _ in EFFICIENCY_FIELDS:
                value = getattr(d, name)
                self.query_one(f"#eff-{name}", Input).value = "" if value is None else f"{value:g}"
            self._new_form(focus=False)
            self.focus_when_untouched(self.query_one("#axis", Select))  # not taken from where someone types
        elif self._after_save is not None:
            self._settle_after_save(self._after_save)

    # ------------------------------------------------------------------ the form's state

    def form_state(self) -> dict[str, Any]:
        """Everything the form holds, to tell whether the annotator changed anything."""
        state: dict[str, Any] = {f"cp-{n}": self.query_one(f"#cp-{n}", Input).value for n, _ in TEXT_FIELDS}
        for name in ("axis", "step", "gt", "match"):
            state[name] = chosen(self.query_one(f"#{name}", Select))
        return state

    def _mark_clean(self) -> None:
        self._baseline = self.form_state()

    def unsaved_changes(self) -> list[str]:
        """What would be lost by leaving now: the checkpoint form, the ordering and efficiency inputs."""
        lost = []
        if self.form_state() != self._baseline:
            lost.append(f"checkpoint {self.query_one('#cp-key', Input).value or '(new)'}")
        if self.query_one("#order-seq", Input).value.strip() or self.query_one("#order-gap", Input).value.strip():
            lost.append("the ordering constraint")
        if self.detail is not None:
            for name, _label in EFFICIENCY_FIELDS:
                stored = getattr(self.detail, name)
                if self.query_one(f"#eff-{name}", Input).value.strip() != ("" if stored is None else f"{stored:g}"):
                    lost.append("the efficiency reference")
                    break
        return lost

    def _unless_unsaved(self, then: Callable[[], object], only_form: bool = False) -> None:
        """Run ``then`` now, or after the annotator agrees to drop what they typed."""
        lost = self.unsaved_changes()
        self.confirm_discard(then, [w for w in lost if w.startswith("checkpoint ")] if only_form else lost)

    # ------------------------------------------------------------------ new, open, save, delete

    def action_new_checkpoint(self) -> None:
        self._unless_unsaved(self._new_form, only_form=True)

    def _new_form(self, focus: bool = True) -> None:
        self.editing = None
        d = self.detail
        self.query_one("#form-title", Static).update("New checkpoint")
        for name, _ in TEXT_FIELDS:
            self.query_one(f"#cp-{name}", Input).value = ""
        self.query_one("#cp-weight", Input).value = "1"
        for name in ("step", "gt", "match"):
            choose(self.query_one(f"#{name}", Select), None)
        if d is not None:
            self.query_one("#cp-key", Input).value = _next_key(d)
            step = next((s for s in d.steps if s.id == self.step_id), None)
            if step is not None:
                choose(self.query_one("#step", Select), step.id)
                if step.tool_name:
                    self.query_one("#cp-tools", Input).value = step.tool_name
                if step.artifact_asset_ids:
                    choose(self.query_one("#gt", Select), step.artifact_asset_ids[0])
        self._mark_clean()
        if focus:
            self.query_one("#axis", Select).focus()

    @on(OptionList.OptionSelected, "#checkpoint-list")
    def _edit_existing(self, event: OptionList.OptionSelected) -> None:
        cp_id = event.option.id
        if self.editing is not None and str(self.editing) == cp_id:
            return
        self._unless_unsaved(lambda: self._open(cp_id), only_form=True)

    def _open(self, cp_id: str | None) -> None:
        cp = next((c for c in (self.detail.checkpoints if self.detail else []) if str(c.id) == cp_id), None)
        if cp is None:
            return
        self.editing = cp.id
        self._opened, self._overwrite = signature(cp), False
        self.query_one("#form-title", Static).update(data_content(f"Checkpoint {cp.key}"))
        for name, value in values_of(cp).items():
            self.query_one(f"#cp-{name}", Input).value = value
        choose(self.query_one("#axis", Select), cp.axis if cp.axis in AXES else "V")
        choose(self.query_one("#step", Select), cp.step_id)
        choose(self.query_one("#gt", Select), cp.gt_asset_id)
        choose(self.query_one("#match", Select), (cp.answer_check or {}).get("match_type"))
        self._mark_clean()

    @after_typed_keys
    def action_save_checkpoint(self) -> None:
        values = {name: self.query_one(f"#cp-{name}", Input).value.strip() for name, _ in TEXT_FIELDS}
        try:
            fields = checkpoint_fields(
                values,
                str(chosen(self.query_one("#axis", Select)) or "V"),
                chosen(self.query_one("#step", Select)),
                chosen(self.query_one("#gt", Select)),
                chosen(self.query_one("#match", Select)),
            )
        except ValueError as exc:
            self.notify(str(exc), title="checkpoint not saved", severity="error")
            return
        key = values["key"] or None
        task_id, editing = self.task_id, self.editing
        opened, overwrite = self._opened, self._overwrite

        def apply(session):  # type: ignore[no-untyped-def]
            from store.models import Checkpoint

            if editing is None:
                cp = authoring.add_checkpoint(session, task_id, key, **fields)
                cp_id = cp.id

                made = made_row(session, Checkpoint, cp_id)
                return cp_id, Edit(
                    f"add checkpoint {cp.key}", "delete_checkpoint_row", {"checkpoint_id": cp_id}, made=made
                )
            row = session.get(Checkpoint, editing)
            if row is None:
                raise authoring.AuthoringError("this checkpoint was deleted meanwhile; ctrl+n starts a new one")
            if opened is not None and signature(row) != opened and not overwrite:
                self._overwrite = True
                raise authoring.AuthoringError(
                    f"checkpoint {row.key} was changed by {_last_actor(session, editing)} since you opened it; "
                    "your form is kept: ctrl+s again overwrites theirs, enter on it in the list shows theirs"
                )
            if fields.get("code_check") and isinstance(row.code_check, dict):  # keep keys the form doesn't show
                fields["code_check"] = {**row.code_check, **fields["code_check"]}
            before = {k: getattr(row, k) for k in [*fields, "key"]}
            authoring.edit_checkpoint(session, editing, key=key or row.key, **fields)
            self._opened, self._overwrite = signature(row), False
            return editing, Edit(
                f"edit checkpoint {before['key']}", "edit_checkpoint", {"checkpoint_id": editing, "fields": before}
            )

        self._saved_state = self.form_state()
        self.save("checkpoint", apply)

    @on(Saved)
    def _checkpoint_saved(self, message: Saved) -> None:
        if message.what == "checkpoint":
            self._after_save = message.data
            self.step_id = None
            self.notify(f"saved checkpoint {self._saved_state.get('cp-key', '') if self._saved_state else ''}")
        elif message.what == "delete checkpoint" and message.data == self.editing:
            # the open checkpoint is gone: an untouched form starts afresh; typing stays, to save as new
            self.editing = None
            if self.form_state() == self._baseline:
                self._new_form()
            else:
                self.query_one("#form-title", Static).update("New checkpoint (the one edited here was deleted)")
        elif message.what == "ordering":
            self.query_one("#order-seq", Input).value = ""
            self.query_one("#order-gap", Input).value = ""

    @on(Failed)
    def _checkpoint_failed(self, message: Failed) -> None:
        if message.what == "checkpoint":
            self._saved_state = None  # the form keeps everything typed; fix and save again

    def _settle_after_save(self, cp_id: int) -> None:
        """After a save lands: a fresh form, unless the annotator kept typing meanwhile (then the
        form stays, now editing the saved checkpoint, with the new typing still unsaved)."""
        self._after_save = None
        saved_state, self._saved_state = self._saved_state, None
        if saved_state is not None and self.form_state() != saved_state:
            self.editing = cp_id
            self._baseline = saved_state
            return
        self._new_form()

    def _highlighted(self, list_id: str) -> str | None:
        options = self.query_one(f"#{list_id}", OptionList)
        if options.highlighted is None or options.option_count == 0:
            return None
        return options.get_option_at_index(options.highlighted).id

    def action_delete_checkpoint(self) -> None:
        cp_id = self._highlighted("checkpoint-list")
        if cp_id is None:
            return
        task_id, checkpoint_id = self.task_id, int(cp_id)

        def delete(session):  # type: ignore[no-untyped-def]
            snapshot = authoring.delete_checkpoint(session, checkpoint_id)
            fields = {k: v for k, v in snapshot.items() if k not in ("task_id", "key")}
            return Edit(
                f"delete checkpoint {snapshot['key']}",
                "add_checkpoint",
                {"task_id": task_id, "key": snapshot["key"], "fields": fields},
            )

        self.save("delete checkpoint", lambda session: (checkpoint_id, delete(session)))

    def action_delete_ordering(self) -> None:
        key = self._highlighted("ordering-list")
        if key is None:
            return
        task_id = self.task_id

        def delete(session):  # type: ignore[no-untyped-def]
            snap = authoring.delete_ordering_constraint(session, task_id, key)
            return Edit(
                f"delete ordering {key}",
                "add_ordering",
                {"task_id": task_id, "sequence": snap["sequence"], "max_gap": snap["max_gap"], "key": snap["key"]},
            )

        self.save("delete ordering", delete)

    @after_typed_keys
    def action_add_ordering(self) -> None:
        seq = [k.strip() for k in self.query_one("#order-seq", Input).value.replace(",", ">").split(">") if k.strip()]
        gap_text = self.query_one("#order-gap", Input).value.strip()
        try:
            gap = int(gap_text) if gap_text else None
        except ValueError:
            self.notify(f"max gap must be a whole number, got {gap_text!r}", severity="error")
            return
        task_id = self.task_id

        def apply(session):  # type: ignore[no-untyped-def]

            oc = authoring.add_ordering_constraint(session, task_id, seq, gap)
            oc_id = oc.id

            from store.models import OrderingConstraint

            made = made_row(session, OrderingConstraint, oc_id)
            return Edit(f"add ordering {' > '.join(seq)}", "delete_ordering_row", {"ordering_id": oc_id}, made=made)

        self.save("ordering", apply)

    @after_typed_keys
    def action_save_efficiency(self) -> None:
        changes: dict[str, Any] = {}
        for name, kind in (("reference_tool_calls", int), ("max_tool_calls", int), ("penalty_per_extra_call", float)):
            text = self.query_one(f"#eff-{name}", Input).value.strip()
            try:
                changes[name] = kind(text) if text else None
            except ValueError:
                self.notify(f"{name.replace('_', ' ')} must be a number, got {text!r}", severity="error")
                return
        self.save("efficiency", edit_fields(self.task_id, changes, "edit efficiency"))

    def action_back(self) -> None:
        self.leave()


EFFICIENCY_FIELDS = (
    ("reference_tool_calls", "reference calls"),
    ("max_tool_calls", "max calls"),
    ("penalty_per_extra_call", "penalty/call"),
)


def signature(cp: Any) -> tuple[Any, ...]:
    """A checkpoint's content (stored row or loaded view alike), to notice edits made elsewhere."""
    return (
        cp.key,
        cp.axis,
        cp.step_id,
        cp.description or "",
        list(cp.tools or []),
        cp.code_check or None,
        cp.visual_check or None,
        cp.search_check or None,
        cp.answer_check or None,
        cp.gt_asset_id,
        float(cp.weight),
    )


def _last_actor(session: Any, checkpoint_id: int) -> str:
    from sqlmodel import select

    from store.models import AuditEvent

    event = session.exec(
        select(AuditEvent)
        .where(AuditEvent.entity == "checkpoint", AuditEvent.entity_id == checkpoint_id)
        .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
    ).first()
    return (event.actor if event is not None else None) or "someone"


def _next_key(d: TaskDetail) -> str:
    used = {c.key for c in d.checkpoints}
    n = len(d.checkpoints) + 1
    while f"cp{n}" in used:
        n += 1
    return f"cp{n}"
