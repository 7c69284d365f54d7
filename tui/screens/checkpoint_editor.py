"""Checkpoint editor: S/V/R checkpoints on a task's chain, ordering constraints, efficiency reference.

Opened from the task editor (all checkpoints) or from a step in the chain builder (the new
checkpoint is tied to that step, and a V checkpoint takes the step's artifact as ground truth).
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from annotation import tasks as authoring
from tui.app import Edit
from tui.data import CheckpointView, TaskDetail, task_detail
from tui.messages import Loaded
from tui.screens.base import WorkScreen
from tui.widgets.footer import KeyFooter

AXES = ("S", "V", "R")
MATCH_TYPES = ("exact", "contains", "numeric", "whitelist", "regex", "mcq")
TEXT_FIELDS = [
    ("key", "key"), ("description", "description"), ("tools", "expected tools (comma)"),
    ("v_question", "visual question"), ("v_answer", "visual expected answer"),
    ("s_keywords", "search keywords (comma)"), ("s_urls", "search URLs (comma)"), ("s_answer", "search expected answer"),
    ("a_target", "answer target"), ("a_tolerance", "answer tolerance"), ("a_keywords", "answer keywords (comma)"),
    ("weight", "weight"),
]


def _csv(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def checkpoint_fields(values: dict[str, str], axis: str, step_id: int | None, gt_asset_id: int | None,
                      match_type: str | None) -> dict[str, Any]:
    """Form texts → ``add_checkpoint`` fields; empty checks stay None so scorers skip them."""
    out: dict[str, Any] = {"axis": axis, "step_id": step_id, "description": values.get("description") or None,
                           "tools": _csv(values.get("tools", "")), "gt_asset_id": gt_asset_id}
    if values.get("v_question") or values.get("v_answer"):
        out["visual_check"] = {"question": values.get("v_question", ""), "expected_answer": values.get("v_answer", "")}
    else:
        out["visual_check"] = None
    if values.get("s_keywords") or values.get("s_urls") or values.get("s_answer"):
        out["search_check"] = {"keywords": _csv(values.get("s_keywords", "")), "urls": _csv(values.get("s_urls", "")),
                               "expected_answer": values.get("s_answer", "")}
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
    return {
        "key": cp.key, "description": cp.description, "tools": ", ".join(cp.tools),
        "v_question": v.get("question", ""), "v_answer": v.get("expected_answer", ""),
        "s_keywords": ", ".join(s.get("keywords") or []), "s_urls": ", ".join(s.get("urls") or []),
        "s_answer": s.get("expected_answer", ""), "a_target": str(a.get("target", "")),
        "a_tolerance": "" if a.get("tolerance") is None else f"{a['tolerance']:g}",
        "a_keywords": ", ".join(a.get("keywords") or []), "weight": f"{cp.weight:g}",
    }


class CheckpointEditorScreen(WorkScreen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("ctrl+s", "save_checkpoint", "Save checkpoint", priority=True),
        Binding("ctrl+n", "new_checkpoint", "New", priority=True),
        Binding("ctrl+o", "add_ordering", "Add ordering", priority=True),
        Binding("ctrl+e", "save_efficiency", "Save efficiency", priority=True),
    ]

    def __init__(self, task_id: int, step_id: int | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.step_id = step_id
        self.detail: TaskDetail | None = None
        self.editing: int | None = None  # checkpoint id being edited, None for a new one

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="builder-body"):
            with Vertical(id="builder-left"):
                yield Static("Checkpoints", classes="section-title")
                yield OptionList(id="checkpoint-list")
                yield Static("", id="orderings", classes="hint")
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
                        yield Label(label[:13])
                        yield Input(placeholder=label, id=f"cp-{name}")
                yield Static("Ordering constraint (ctrl+o)", classes="section-title")
                with Horizontal(classes="field-row"):
                    yield Label("sequence")
                    yield Input(placeholder="checkpoint keys in order, e.g. cp1 > cp2", id="order-seq")
                with Horizontal(classes="field-row"):
                    yield Label("max gap")
                    yield Input(placeholder="events allowed between neighbours (empty: any)", id="order-gap")
                yield Static("Efficiency reference (ctrl+e)", classes="section-title")
                for name, label in (("reference_tool_calls", "reference calls"), ("max_tool_calls", "max calls"),
                                    ("penalty_per_extra_call", "penalty/call")):
                    with Horizontal(classes="field-row"):
                        yield Label(label)
                        yield Input(id=f"eff-{name}")
        yield KeyFooter()

    def refresh_data(self) -> None:
        task_id = self.task_id
        self.load("task", lambda s: task_detail(s, task_id, with_history=False))

    @on(Loaded)
    def loaded(self, message: Loaded) -> None:
        if message.what != "task":
            return
        first = self.detail is None
        d: TaskDetail = message.data
        self.detail = d
        self.sub_title = f"task {d.id} · checkpoints"
        cps = self.query_one("#checkpoint-list", OptionList)
        cps.clear_options()
        cps.add_options([Option(f"{c.key} [{c.axis}] {c.description[:24]}", id=str(c.id)) for c in d.checkpoints])
        self.query_one("#orderings", Static).update(
            "\n".join(f"{k}: {' > '.join(seq)}" + (f" (gap ≤ {g})" if g is not None else "") for k, seq, g in d.orderings))
        with self.prevent(Select.Changed):
            self.query_one("#step", Select).set_options(
                [(f"{s.ordinal + 1}. {s.tool_name or 'answer'}", s.id) for s in d.steps])
            self.query_one("#gt", Select).set_options(
                [(f"{a.label} (asset {a.asset_id})", a.asset_id) for a in d.artifacts])
        if first:
            for name in ("reference_tool_calls", "max_tool_calls", "penalty_per_extra_call"):
                value = getattr(d, name)
                self.query_one(f"#eff-{name}", Input).value = "" if value is None else f"{value:g}"
            self.action_new_checkpoint()

    def action_new_checkpoint(self) -> None:
        self.editing = None
        d = self.detail
        self.query_one("#form-title", Static).update("New checkpoint")
        for name, _ in TEXT_FIELDS:
            self.query_one(f"#cp-{name}", Input).value = ""
        self.query_one("#cp-weight", Input).value = "1"
        if d is not None:
            self.query_one("#cp-key", Input).value = _next_key(d)
            step = next((s for s in d.steps if s.id == self.step_id), None)
            if step is not None:
                self.query_one("#step", Select).value = step.id
                if step.tool_name:
                    self.query_one("#cp-tools", Input).value = step.tool_name
                if step.artifact_asset_ids:
                    self.query_one("#gt", Select).value = step.artifact_asset_ids[0]
        self.query_one("#axis", Select).focus()

    @on(OptionList.OptionSelected, "#checkpoint-list")
    def _edit_existing(self, event: OptionList.OptionSelected) -> None:
        cp = next((c for c in (self.detail.checkpoints if self.detail else []) if str(c.id) == event.option.id), None)
        if cp is None:
            return
        self.editing = cp.id
        self.query_one("#form-title", Static).update(f"Checkpoint {cp.key}")
        for name, value in values_of(cp).items():
            self.query_one(f"#cp-{name}", Input).value = value
        self.query_one("#axis", Select).value = cp.axis if cp.axis in AXES else "V"
        self.query_one("#step", Select).value = cp.step_id if cp.step_id else Select.BLANK
        self.query_one("#gt", Select).value = cp.gt_asset_id if cp.gt_asset_id else Select.BLANK
        match = (cp.answer_check or {}).get("match_type")
        self.query_one("#match", Select).value = match if match in MATCH_TYPES else Select.BLANK

    def _select(self, name: str) -> Any:
        value = self.query_one(f"#{name}", Select).value
        return None if value is Select.BLANK else value

    def action_save_checkpoint(self) -> None:
        values = {name: self.query_one(f"#cp-{name}", Input).value.strip() for name, _ in TEXT_FIELDS}
        try:
            fields = checkpoint_fields(values, str(self._select("axis") or "V"), self._select("step"),
                                       self._select("gt"), self._select("match"))
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        key = values["key"] or None
        task_id, editing = self.task_id, self.editing

        def apply(session):  # type: ignore[no-untyped-def]
            from store.models import Checkpoint

            if editing is None:
                cp = authoring.add_checkpoint(session, task_id, key, **fields)
                cp_id = cp.id

                def undo(s):  # type: ignore[no-untyped-def]
                    row = s.get(Checkpoint, cp_id)
                    if row is not None:
                        s.delete(row)

                return Edit(f"add checkpoint {cp.key}", undo)
            row = session.get(Checkpoint, editing)
            before = {k: getattr(row, k) for k in [*fields, "key"]}
            authoring.edit_checkpoint(session, editing, key=key or row.key, **fields)
            return Edit(f"edit checkpoint {before['key']}", lambda s: authoring.edit_checkpoint(s, editing, **before))

        self.save("checkpoint", apply)
        self.editing = None
        self.step_id = None
        self.call_after_refresh(self.action_new_checkpoint)

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
            from store.models import OrderingConstraint

            oc = authoring.add_ordering_constraint(session, task_id, seq, gap)
            oc_id = oc.id

            def undo(s):  # type: ignore[no-untyped-def]
                row = s.get(OrderingConstraint, oc_id)
                if row is not None:
                    s.delete(row)

            return Edit(f"add ordering {' > '.join(seq)}", undo)

        self.save("ordering", apply)
        self.query_one("#order-seq", Input).value = ""

    def action_save_efficiency(self) -> None:
        from tui.screens.task_editor import edit_fields

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
        self.app.pop_screen()


def _next_key(d: TaskDetail) -> str:
    used = {c.key for c in d.checkpoints}
    n = len(d.checkpoints) + 1
    while f"cp{n}" in used:
        n += 1
    return f"cp{n}"
