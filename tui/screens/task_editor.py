"""Task editor: query, images and documents, metadata, answer spec, warnings, status, history.

Every edit is saved as it happens (text fields after a short pause in typing, the rest at once),
through ``annotation.tasks`` so revisions bump and the audit trail records who changed what.
Each save pushes its inverse on the undo stack. ctrl+z in the query or an answer text field takes back
that field's own typing first, then the last saved edit (``LayeredTextArea``, ``tui.undo.TypingSpan``);
the query has the focus once the task has loaded, so typing at once lands there.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import (
    DataTable,
    Input,
    Label,
    Markdown,
    OptionList,
    Select,
    SelectionList,
    Static,
    TextArea,
)
from tui.widgets.header import Header
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from annotation import tasks as authoring
from annotation.tasks import STATUSES, TRANSITIONS
from tui.undo import Edit, TakenOver, TypingSpan, made_row
from tui.data import TaskDetail, change_stamp, task_detail
from tui.images import preview
from tui.messages import Failed, PreviewLoaded, RecordsChanged, Result, Saved
from tui.safe_text import data_text, visible
from tui.screens.base import WorkScreen
from tui.screens.task_edits import edit_fields
from tui.tool_lists import benchmark_tool_set, tools_of_set
from tui.widgets.answer_editor import AnswerEditor
from tui.widgets.data_text_area import DataTextArea
from tui.widgets.footer import KeyFooter
from tui.widgets.image_pane import ImagePane
from tui.widgets.data_input import DataInput

META_FIELDS = ("category", "intent", "level", "domain")
TEXT_DEBOUNCE = 0.6
EARLY_TYPING_WAIT_S = 10.0  # how long quitting waits for the task to load before asking about early typing


FieldConflict = authoring.FieldConflict


@dataclass
class StampLoaded(Result):
    """The task's change stamp now (``tui.data.change_stamp``): a new one means someone saved."""

    WHAT: ClassVar[str] = "revision"
    stamp: str


@dataclass
class EditorTaskLoaded(Result):
    """The task, its authoring warnings, and whether it replaces the focused field too (after undo/reload)."""

    WHAT: ClassVar[str] = "task"
    detail: TaskDetail
    warnings: list[Any]
    force: bool


NO_GUIDELINES = "_No guidelines for this benchmark yet: the chain builder (ctrl+b) writes them with ctrl+g._"
"""The editor's guidelines panel only shows them; it said "none yet" and not where they are written."""

POLL_SECONDS = 2.0
"""How often an open editor looks for changes made elsewhere (another terminal or annotator)."""


class TaskEditorScreen(WorkScreen):
    LOAD_FAILURES = {EditorTaskLoaded.WHAT: ("#task-title", "could not load the task: ", None)}
    BINDINGS = [
        Binding("escape", "back", "Back", id="task_editor.back"),
        Binding("ctrl+b", "chain", "Chain", tooltip="Chain builder", id="task_editor.chain"),
        Binding("ctrl+t", "checkpoints", "Checks", tooltip="Checkpoints", id="task_editor.checkpoints"),
        Binding("ctrl+o", "attach", "Image", tooltip="Attach image", id="task_editor.attach"),
        Binding("ctrl+s", "submit", "Submit", id="task_editor.submit"),
        Binding("ctrl+g", "guidelines", "Guide", tooltip="Guidelines", id="task_editor.guidelines"),
        Binding("ctrl+r", "drafting", "Drafts", tooltip="Drafting aids", id="task_editor.drafting"),
        Binding("ctrl+n", "baseline", "Blind", tooltip="Solve blind", id="task_editor.baseline"),
        Binding("ctrl+down,alt+down", "step(1)", "Next task", id="task_editor.next_task"),
        Binding("ctrl+up,alt+up", "step(-1)", "Previous task", id="task_editor.previous_task"),
    ]

    def __init__(self, task_id: int, sequence: list[int] | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        # The list this editor was opened from (a filter, my queue): next/previous walk it.
        self.sequence = sequence or []
        self.detail: TaskDetail | None = None
        self._pending_saves: dict[str, Timer] = {}
        self._loading = False
        # After an undo or a "reload theirs", the next load *requested from then on* also replaces the
        # focused field (a load already in flight may carry data from before the undo: it must not
        # consume the request, or the field stays stale).
        self._show_all = False
        self._base: dict[str, Any] = {}  # per field: the stored value the annotator's edit started from
        self._conflict: FieldConflict | None = None
        # The last conflict not settled yet: the annotator's edit of that field is in the form only.
        # Quitting must not drop it, whether or not the question has been shown yet.
        self._unsettled: FieldConflict | None = None
        # Per text field ("query", "answer_spec"): its typing since its text was last loaded, which its own
        # undo can take back; the store's stack holds one entry for it at most (``TypingSpan``).
        self._spans: dict[str, TypingSpan] = {}
        self._focused_once = False
        # Typed before the task has loaded (the query has no text to add to yet): typed into it once it has.
        self._early_typing: list[str] = []
        self._first_load = asyncio.Event()  # set once the first load is shown (and the early typing is in)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="editor-body"):
            with VerticalScroll(id="editor-main"):
                yield Static("", id="task-title", classes="section-title")
                yield Label("Query", classes="hint")
                yield DataTextArea(id="query", soft_wrap=True)
                for name in META_FIELDS:
                    with Horizontal(classes="field-row"):
                        yield Label(name)
                        yield DataInput(id=f"meta-{name}")
                with Horizontal(classes="field-row"):
                    yield Label("status")
                    yield Select([(s, s) for s in STATUSES], allow_blank=False, id="status")
                yield Static("Images and documents", classes="section-title")
                with Horizontal(id="images-row"):
                    yield OptionList(id="image-list")
                    yield ImagePane("", classes="preview", id="editor-preview")
                yield Static("", id="documents")
                yield Static("Answer", classes="section-title")
                yield AnswerEditor(id="answer")
                yield Static("Tools offered", classes="section-title")
                yield Static("", id="tools-hint", classes="hint")
                yield SelectionList[str](id="tools")
                yield Static("Warnings", classes="section-title")
                yield Static("", id="warnings", classes="warnings")
                yield Static("Reference chain", classes="section-title")
                yield Static("", id="chain-summary")
                yield Static("Drafting aids", classes="section-title")
                yield Static("", id="drafting-summary")
                yield Static("Revision history", classes="section-title")
                yield DataTable(id="history", cursor_type="row")
            with VerticalScroll(id="guidelines"):
                yield Markdown("", id="guidelines-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#history", DataTable).add_columns("when", "who", "action", "fields")
        self.set_interval(POLL_SECONDS, self._poll)

    def _poll(self) -> None:
        """Reload when the task changed elsewhere, so the screen never shows (and builds on) stale data.
        On PostgreSQL the change notices (``_heard``) say when; the timer only looks while they can't."""
        if not self.cm.live_changes:
            self._look_for_changes()

    @on(RecordsChanged)
    def _heard(self, message: RecordsChanged) -> None:
        if message.notice.touches_task(self.task_id):
            self._look_for_changes()

    def _look_for_changes(self) -> None:
        if self.detail is None or not self.is_current:
            return
        task_id = self.task_id
        self.fetch(StampLoaded, lambda s: StampLoaded(change_stamp(authoring.get_task(s, task_id))))

    # ------------------------------------------------------------------ loading

    def refresh_data(self) -> None:
        task_id = self.task_id

        force = self._show_all

        self.fetch(
            EditorTaskLoaded,
            lambda s: EditorTaskLoaded(task_detail(s, task_id), authoring.task_warnings(s, task_id), force),
        )

    @on(StampLoaded)
    def _stamp_loaded(self, message: StampLoaded) -> None:
        if self.detail is not None and message.stamp != self.detail.changed_at:
            self.refresh_data()

    def _held(self, field: str) -> bool:
        """The form's value of ``field`` is the annotator's and must not be replaced by a load: a save
        of it is on its way (a load read before that save lands would put the old value back), or it
        was refused as a conflict and is still to be settled (reload, overwrite or merge)."""
        if self._unsettled is not None and self._unsettled.field == field:
            return True
        return any(
            w.group == "save" and w.description == field and not w.is_finished and w.node is self
            for w in self.app.workers
        )

    def _typed_unsaved(self, names: tuple[str, ...], edited: bool, force: bool) -> bool:
        """A text field (its save and conflict ``names``) holds typing a load must not replace: its save
        is waiting or on its way, or it was ``edited`` since it was last loaded or saved (a key handled
        just now, its save not started yet). The annotator's edit wins: it is saved against the value it
        started from, so a colleague's change of the same field meanwhile is said as a conflict, never
        lost silently. ``force`` (after an undo or "reload theirs") replaces what they chose to give up."""
        if any(name in self._pending_saves or self._held(name) for name in names):
            return True
        return edited and not force

    @on(EditorTaskLoaded)
    def _task_loaded(self, message: EditorTaskLoaded) -> None:
        self.detail = message.detail
        self._show(message.detail, message.warnings, message.force)
        if not self._focused_once:  # the first load: typing at once goes into the query
            self._focused_once = True
            query = self.query_one("#query", TextArea)
            early, self._early_typing = "".join(self._early_typing), []
            if self.focus_when_untouched(query) or query.has_focus:
                query.move_cursor(query.document.end)
            if early:  # an edit like any typing: undoable, and saved after the pause
                query.insert(early, query.document.end, maintain_selection_offset=not query.has_focus)
                self._debounce("query", self._save_query)
            self._first_load.set()

    def on_key(self, event: events.Key) -> None:
        """Characters typed while the task loads, before the query has the focus: kept for the query; and
        characters routed here just before the load gave the query the focus: typed into it."""
        if not (event.is_printable and event.character):
            return
        query = self.query_one("#query", TextArea)
        if self.detail is None and not self._focused_once:
            self._early_typing.append(event.character)
        elif self.focused is query and not query.read_only:  # the query itself takes every character
            query.insert(event.character)
        else:
            return
        event.stop()
        event.prevent_default()

    @on(PreviewLoaded)
    def _preview_loaded(self, message: PreviewLoaded) -> None:
        self.query_one("#editor-preview", ImagePane).show(message.image, message.caption, source=message.sha256)

    def _show(self, d: TaskDetail, warnings: list[Any], force: bool = False) -> None:
        self._loading = True
        # A save on its way keeps its field as typed, even in a forced load (which read before it landed):
        # the request to show everything then stays for the load after that save.
        fields = ("query", "answer", "answer_spec", "tools", "tools_offered", *META_FIELDS)
        saving = bool(self._pending_saves) or any(self._held(name) for name in fields)
        self.sub_title = f"task {d.id}" + self._position()
        note = d.meta.get("review") if isinstance(d.meta.get("review"), dict) else None
        review = (
            f"\n{d.status}: {note['reason']}" + (f" ({note['by']})" if note.get("by") else "")
            if note and note.get("reason") and note.get("status") == d.status
            else ""
        )
        self.query_one("#task-title", Static).update(
            data_text(f"#{d.id} {d.source_id} · {d.benchmark} · {d.status} · revision {d.revision}{review}")
        )
        query = self.query_one("#query", DataTextArea)
        edited = "query" in self._base and query.text != self._base["query"]
        if not self._typed_unsaved(("query",), edited, force):
            if query.text != d.query:
                if "query" not in self._spans:  # the first load: what was typed into it before is added after
                    self._early_typing[:0] = [query.text]
                with self.prevent(TextArea.Changed):  # a reload is not typing: its echo must not save
                    query.show_text(d.query)  # cursor kept in place; clears the field's own undo history
                self._spans["query"] = TypingSpan(d.query)
            self._base["query"] = d.query
        self._spans.setdefault("query", TypingSpan(d.query))
        for name in META_FIELDS:
            box = self.query_one(f"#meta-{name}", Input)
            if force or (not box.has_focus and f"meta-{name}" not in self._pending_saves and not self._held(name)):
                if box.value != (getattr(d, name) or ""):
                    with self.prevent(Input.Changed):
                        box.value = getattr(d, name) or ""
                self._base[name] = getattr(d, name)
            elif name not in self._base:
                self._base[name] = getattr(d, name)
        if force and not saving:  # asked for after an undo, reload or merge, and nothing held back: met
            self._show_all = False
        with self.prevent(Select.Changed):
            self.query_one("#status", Select).value = d.status
        answer = self.query_one(AnswerEditor)
        edited = "answer_spec" in self._base and answer.edited_since(self._base["answer_spec"])
        if not self._typed_unsaved(("answer", "answer_spec"), edited, force):
            if answer.spec != d.answer_spec:
                answer.set_spec(d.answer_spec)  # new fields: no undo history of their own
                self._spans["answer_spec"] = TypingSpan(d.answer_spec)
            self._base["answer_spec"] = d.answer_spec
        self._spans.setdefault("answer_spec", TypingSpan(d.answer_spec))
        self._show_tools(d, force)
        self._show_images(d)
        docs = Text()
        for title, text in d.documents:
            docs.append(("\n\n" if docs else "") + visible(title), style="bold")
            docs.append("\n" + visible(text[:600], keep_newlines=True))
        self.query_one("#documents", Static).update(docs)
        self.query_one("#warnings", Static).update(
            data_text("\n".join(f"! {w.code}: {w.message}" for w in warnings) or "no warnings")
        )
        self.query_one("#chain-summary", Static).update(data_text(_chain_text(d)))
        self.query_one("#drafting-summary", Static).update(data_text(_drafting_text(d.meta)))
        history = self.query_one("#history", DataTable)
        history.clear()
        for h in d.history:
            history.add_row(
                h.at.replace("T", " "),
                data_text(h.actor, keep_newlines=False),
                h.action,
                data_text(", ".join(h.fields), keep_newlines=False),
                key=str(h.audit_id),
            )
        self.query_one("#guidelines-text", Markdown).update(d.guidelines or NO_GUIDELINES)
        self.call_after_refresh(self._done_loading)

    def _done_loading(self) -> None:
        self._loading = False

    def _position(self) -> str:
        return (
            f" · {self.sequence.index(self.task_id) + 1} of {len(self.sequence)}"
            if self.task_id in self.sequence
            else ""
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "step":
            return self.task_id in self.sequence and len(self.sequence) > 1
        return True

    def action_step(self, delta: int) -> None:
        """The next (or previous) task of the list this editor came from; typing is saved first."""
        if self.task_id not in self.sequence:
            return
        at = self.sequence.index(self.task_id) + delta
        if not 0 <= at < len(self.sequence):
            self.notify(
                "that was the last task of the list" if delta > 0 else "this is the first task of the list",
                severity="warning",
                timeout=3,
            )
            return
        self.flush_pending()
        target, sequence = self.sequence[at], self.sequence

        def go() -> None:
            self.app.pop_screen()
            self.app.push_screen(TaskEditorScreen(target, sequence=sequence))

        self.confirm_discard(go)

    @on(DataTable.RowSelected, "#history")
    def _revert_asked(self, event: DataTable.RowSelected) -> None:
        """Enter on a history entry: take the task back to just after that change (asks first)."""
        if event.row_key is None or event.row_key.value is None:
            return
        audit_id, task_id = int(event.row_key.value), self.task_id
        at = str(event.data_table.get_row(event.row_key)[0])

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            self.flush_pending()

            def revert(session):  # type: ignore[no-untyped-def]
                from annotation.history import revert_task_to

                return revert_task_to(session, task_id, audit_id)

            self.save("revert", revert)

        from tui.screens.confirm import ConfirmDiscardScreen

        self.app.push_screen(
            ConfirmDiscardScreen(
                f"Revert the task, its steps, checkpoints and images to how they were after the change of {at}? "
                "Later changes are taken back (the revert itself is kept in the history).",
                discard_label="Revert  d",
            ),
            answered,
        )

    @on(Saved)
    def _undone(self, message: Saved) -> None:
        if message.what.startswith("undid:") or message.what == "revert":
            self._show_all = True
            self.refresh_data()

    def _show_tools(self, d: TaskDetail, force: bool) -> None:
        """The benchmark's tool set as a checklist, the task's tool list ticked (space toggles a tool)."""
        tool_set = benchmark_tool_set(d.tool_set, d.source_format)
        names = tools_of_set(tool_set)
        names += [n for n in d.tools_offered if n not in names]  # imported names the set lacks: kept, shown
        self.query_one("#tools-hint", Static).update(
            data_text(
                f"tool set {tool_set}: space ticks the tools the model is offered"
                + ("" if d.tools_offered else " (none ticked: it is offered every tool)")
            )
        )
        if not force and ("tools" in self._pending_saves or self._held("tools_offered")):
            return
        self._base["tools_offered"] = list(d.tools_offered)
        box = self.query_one("#tools", SelectionList)
        shown = [str(box.get_option_at_index(i).value) for i in range(box.option_count)]
        with self.prevent(SelectionList.SelectedChanged):
            if shown != names:
                box.clear_options()
                box.add_options([Selection(data_text(n, keep_newlines=False), n) for n in names])
                box.highlighted = 0 if names else None  # space ticks the first tool at once
            if set(box.selected) != set(d.tools_offered):
                box.deselect_all()
                for name in d.tools_offered:
                    box.select(name)

    @on(SelectionList.SelectedChanged, "#tools")
    def _tools_changed(self) -> None:
        if not self._loading and self.detail is not None:  # a pause first: quick toggles save once
            self._debounce("tools", self._save_tools)

    def _save_tools(self) -> None:
        """The ticked tools, in the tool set's order, as the task's tool list."""
        box = self.query_one("#tools", SelectionList)
        ticked = set(box.selected)
        chosen = [str(box.get_option_at_index(i).value) for i in range(box.option_count)]
        chosen = [n for n in chosen if n in ticked]
        if self.detail is not None:  # an unchanged list writes nothing (``edit_unless_changed``)
            self._save_fields("tools_offered", {"tools_offered": chosen}, "edit tools")

    def _show_images(self, d: TaskDetail) -> None:
        options = self.query_one("#image-list", OptionList)
        refs = d.image_sequence()
        wanted = [f"{i}: {r.label} {r.width or '?'}×{r.height or '?'}" for i, r in enumerate(refs)]
        current = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        if wanted != current:
            options.clear_options()
            options.add_options([Option(data_text(text), id=str(i)) for i, text in enumerate(wanted)])
            if refs:
                options.highlighted = 0
            else:
                self.query_one("#editor-preview", ImagePane).show(None, "no images yet — ctrl+o attaches one")

    @on(OptionList.OptionHighlighted, "#image-list")
    def _image_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.detail is None or event.option.id is None:
            return
        ref = self.detail.image_sequence()[int(event.option.id)]
        cm = self.cm

        self.fetch(
            PreviewLoaded,
            lambda s: PreviewLoaded(
                f"{ref.label} · {ref.mime} · {ref.width}×{ref.height}", preview(cm.blobs.get(ref.sha256, s)), ref.sha256
            ),
        )

    # ------------------------------------------------------------------ saving as you type

    def _debounce(self, key: str, callback) -> None:  # type: ignore[no-untyped-def]
        if key in self._pending_saves:
            self._pending_saves[key].stop()

        def fire() -> None:
            self._pending_saves.pop(key, None)
            callback()

        self._pending_saves[key] = self.set_timer(TEXT_DEBOUNCE, fire)

    def flush_pending(self) -> None:
        """Save whatever is waiting on a debounce timer now (before leaving the screen)."""
        for key, timer in list(self._pending_saves.items()):
            timer.stop()
            self._pending_saves.pop(key, None)
            {"query": self._save_query, "answer": self._save_answer, "tools": self._save_tools}.get(key, lambda: None)()
            if key.startswith("meta-"):
                self._save_meta(key.removeprefix("meta-"))

    @on(TextArea.Changed, "#query")
    def _query_changed(self) -> None:
        if self.detail is None:  # before the first load: kept (``_early_typing``)
            return
        if not self._echo_of_load(self.query_one("#query", TextArea).text, self.detail.query):
            self._debounce("query", self._save_query)

    def _echo_of_load(self, value: Any, loaded: Any) -> bool:
        """A Changed that only repeats what the load just put in (ignoring all changes while loading lost
        the keys typed in that moment: nothing saved them, and the next live update replaced them)."""
        return self._loading and value == loaded

    def _save_query(self) -> None:
        text = self.query_one("#query", TextArea).text
        if self.detail and text != self.detail.query and text.strip():
            self._save_fields("query", {"query": text}, "edit query", self._spans.get("query"))

    @on(Input.Changed)
    def _meta_changed(self, event: Input.Changed) -> None:
        if not (event.input.id or "").startswith("meta-"):
            return
        name = (event.input.id or "").removeprefix("meta-")
        if self.detail is not None and self._echo_of_load(event.value, getattr(self.detail, name) or ""):
            return
        self._debounce(f"meta-{name}", lambda: self._save_meta(name))

    def _save_meta(self, name: str) -> None:
        value = self.query_one(f"#meta-{name}", Input).value.strip() or None
        if self.detail and (getattr(self.detail, name) or None) != value:
            self._save_fields(name, {name: value}, f"edit {name}")

    @on(AnswerEditor.Changed)
    def _answer_changed(self, event: AnswerEditor.Changed) -> None:
        if self.detail is not None and self._echo_of_load(event.spec, self.detail.answer_spec):
            return
        if event.error is None:
            self._debounce("answer", self._save_answer)

    def _save_answer(self) -> None:
        spec, error = self.query_one(AnswerEditor).current()
        if error is None and self.detail and spec != self.detail.answer_spec:
            self._save_fields("answer", {"answer_spec": spec}, "edit answer", self._spans.get("answer_spec"))

    def _save_fields(self, what: str, changes: dict[str, Any], label: str, span: TypingSpan | None = None) -> None:
        """Save ``changes``; with ``span`` (one text field's typing) the save replaces the span's entry on
        the undo stack instead of adding one (``TypingSpan``)."""
        base = {k: self._base[k] for k in changes if k in self._base}
        fn = edit_fields(self.task_id, changes, label, base)
        task_id = self.task_id

        def apply(session):  # type: ignore[no-untyped-def]
            try:
                out = fn(session)
            except FieldConflict as conflict:
                self._conflict = self._unsettled = conflict
                raise
            self._base.update(changes)  # what is stored now is what the next edit builds on
            if self._unsettled is not None and self._unsettled.field in changes:
                self._unsettled = None  # overwritten or merged: the edit is stored
            if span is None or out is None:
                return out
            ((name, value),) = changes.items()
            return span.take_over(
                session,
                value,
                lambda: Edit(
                    label, "edit_task", {"task_id": task_id, "fields": {name: span.start}, "after": {name: value}}
                ),
            )

        self.save(what, apply)

    def typing_entries(self, field: Any) -> list[Any]:
        span = self._spans.get("query" if field.id == "query" else "answer_spec")
        return list(span.entries) if span is not None else []

    @on(Saved)
    def _typing_taken_over(self, message: Saved) -> None:
        if isinstance(message.data, TakenOver) and message.data.edits:
            self.cm.drop_undo(message.data.edits, self.undo_scope)

    @on(Failed)
    def _field_conflict(self, message: Failed) -> None:
        conflict, self._conflict = self._conflict, None
        if conflict is not None:
            self._ask_about(conflict)

    def _ask_about(self, conflict: FieldConflict) -> None:
        """Who changed the field and how; reload theirs, overwrite with mine, or merge the two."""
        from tui.screens.conflict import ConflictScreen

        def show(value: Any) -> str:
            return repr(value) if not isinstance(value, str) else f"{value[:200]!r}"

        def decided(choice: str | None) -> None:
            if choice == "overwrite":
                self._base[conflict.field] = conflict.theirs
                self._save_fields(
                    conflict.field, {conflict.field: conflict.mine}, f"edit {conflict.field}", self._restart(conflict)
                )
            elif choice == "reload":
                self._unsettled = None  # the annotator chose to drop their edit
                self._base[conflict.field] = conflict.theirs
                self._show_all = True
                self.refresh_data()
            elif choice == "merge":
                self._merge(conflict)

        self.app.push_screen(
            ConflictScreen(
                f"{conflict.field} was changed by {conflict.who} while you were editing it.\n"
                f"  you started from: {show(conflict.base)}\n  theirs now:       {show(conflict.theirs)}\n"
                f"  yours:            {show(conflict.mine)}\n"
                "Reload theirs (r) drops your edit of this field; overwrite (o) saves yours over theirs; merge (m) "
                "combines both; escape keeps your edit in the form, unsaved."
            ),
            decided,
        )

    def _restart(self, conflict: FieldConflict) -> TypingSpan | None:
        """After a conflict the field's typing builds on theirs: its undo entry takes it back to theirs."""
        if conflict.field not in self._spans:
            return None
        self._spans[conflict.field] = TypingSpan(conflict.theirs)
        return self._spans[conflict.field]

    def _merge(self, conflict: FieldConflict) -> None:
        from tui.screens.merge import MergeScreen

        def merged(value: Any) -> None:
            if value is MergeScreen.CANCELLED:
                self._ask_about(conflict)  # back to the choice; the edit is still in the form
                return
            if conflict.field in META_FIELDS and isinstance(value, str):
                value = value.strip() or None
            self._base[conflict.field] = conflict.theirs  # the merge was made against theirs
            self._show_all = True  # the form shows the merged value once it is stored
            self._save_fields(
                conflict.field, {conflict.field: value}, f"merge {conflict.field}", self._restart(conflict)
            )

        self.app.push_screen(
            MergeScreen(conflict.field, conflict.base, conflict.mine, conflict.theirs, conflict.who), merged
        )

    @on(Select.Changed, "#status")
    def _status_changed(self, event: Select.Changed) -> None:
        if self.detail is None or event.value == self.detail.status:
            return
        self.set_status(str(event.value))

    def set_status(self, status: str) -> None:
        if self.detail is None:
            return
        current = self.detail.status
        if status not in TRANSITIONS.get(current, set()):
            self.notify(f"a {current} task can move to {', '.join(sorted(TRANSITIONS[current]))}", severity="error")
            with self.prevent(Select.Changed):
                self.query_one("#status", Select).value = current
            return
        self.flush_pending()
        if status == "rejected":
            from tui.screens.prompt import PromptScreen

            def rejected(reason: str | None) -> None:
                if reason:
                    self._save_status(current, status, reason)
                else:
                    self.notify("not rejected: a rejection needs a reason", severity="warning")
                    with self.prevent(Select.Changed):
                        self.query_one("#status", Select).value = current

            self.app.push_screen(
                PromptScreen("Why is it rejected? (the author sees this)", placeholder="what to fix"), rejected
            )
            return
        self._save_status(current, status, None)

    def _save_status(self, current: str, status: str, reason: str | None) -> None:
        task_id = self.task_id

        def apply(session):  # type: ignore[no-untyped-def]
            authoring.set_status(session, task_id, status, reason=reason)
            return Edit(
                f"status {current} → {status}",
                "edit_task",
                {"task_id": task_id, "fields": {"status": current}, "after": {"status": status}},
            )

        self.save("status", apply)

    @on(Failed)
    def _status_failed(self, message: Failed) -> None:
        if message.what == "status":
            self.refresh_data()  # show the stored status again

    # ------------------------------------------------------------------ actions

    async def settle_before_quit(self) -> None:
        """Keys typed before the task loaded wait for the query's text: let the load land (they go in and
        are saved with the rest) rather than ask about them, unless it takes longer than EARLY_TYPING_WAIT_S."""
        if self._typed_before_load():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._first_load.wait(), EARLY_TYPING_WAIT_S)

    def unsaved_changes(self) -> list[str]:
        _, error = self.query_one(AnswerEditor).current()
        lost = [f"the answer spec is invalid ({error})"] if error else []
        if (c := self._unsettled) is not None:
            lost.append(f"your edit of {c.field} ({c.who} changed it while you were editing)")
        if typed := self._typed_before_load():  # waiting for the query's text: stay, and it is added
            lost.append(f"{typed!r} typed into the query while the task is still loading")
        return lost

    def _typed_before_load(self) -> str:
        """What was typed before the task loaded: into the query field itself when it had the focus
        already, then the keys kept for it (the first load puts both after the stored text)."""
        if self.detail is not None:
            return ""
        return self.query_one("#query", TextArea).text + "".join(self._early_typing)

    def action_back(self) -> None:
        self.leave()

    def action_submit(self) -> None:
        self.set_status("submitted")

    def action_guidelines(self) -> None:
        self.query_one("#guidelines").toggle_class("-visible")

    def action_chain(self, blind: bool = False) -> None:
        from tui.screens.chain_builder import ChainBuilderScreen

        self.flush_pending()
        self.app.push_screen(ChainBuilderScreen(self.task_id, blind=blind))

    def action_baseline(self) -> None:
        self.action_chain(blind=True)

    def action_checkpoints(self) -> None:
        from tui.screens.checkpoint_editor import CheckpointEditorScreen

        self.flush_pending()
        self.app.push_screen(CheckpointEditorScreen(self.task_id))

    def action_attach(self) -> None:
        from tui.screens.prompt import PromptScreen

        def attach(path: str | None) -> None:
            if path:
                self.attach_file(Path(path).expanduser())

        self.app.push_screen(PromptScreen("Attach an image (path to a file)", placeholder="/path/to/image.png"), attach)

    def attach_file(self, path: Path, role: str = "query_image") -> None:
        task_id, cm = self.task_id, self.cm

        def apply(session):  # type: ignore[no-untyped-def]
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise FileNotFoundError(f"cannot read {path}: {exc.strerror or exc}") from exc
            link = authoring.attach_asset(session, cm.blobs, task_id, data, role=role, original_path=str(path))
            link_id = link.id

            from store.models import TaskAsset

            return Edit(
                f"attach {path.name}", "detach_asset", {"link_id": link_id}, made=made_row(session, TaskAsset, link_id)
            )

        self.save("attach image", apply)

    def action_drafting(self) -> None:
        from tui.screens.drafting import DraftingScreen

        self.flush_pending()
        self.app.push_screen(DraftingScreen(self.task_id))


def _chain_text(d: TaskDetail) -> str:
    if not d.steps:
        return "no reference steps yet — ctrl+b opens the chain builder"
    lines = []
    for s in d.steps:
        if s.is_final:
            lines.append(f"{s.ordinal + 1}. answer: {s.final_answer}")
        else:
            lines.append(f"{s.ordinal + 1}. {s.tool_name}  {s.result_text[:70]}")
    cps = ", ".join(f"{c.key}[{c.axis}]" for c in d.checkpoints)
    if cps:
        lines.append(f"checkpoints: {cps}")
    return "\n".join(lines)


def _drafting_text(meta: dict[str, Any]) -> str:
    drafting = meta.get("drafting") or {}
    lines = []
    if drafting.get("description"):
        lines.append(f"model description ({drafting.get('endpoint', '?')}): {drafting['description'][:300]}")
    oracle = drafting.get("oracle")
    if oracle:
        verdict = "reached the answer" if oracle.get("passed") else "did NOT reach the answer"
        lines.append(f"oracle check: model {verdict} — said {oracle.get('answer', '')[:120]!r}")
    return "\n".join(lines) or "none yet — ctrl+r"
