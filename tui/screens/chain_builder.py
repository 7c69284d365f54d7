"""Chain builder: run the benchmark's tools on the task's images and record the reference chain.

Left: the image strip (query images, then every artifact in step order; the index is what an
Agentic-MME tool calls ``image_index``) and the tool palette. Centre: the argument form generated
from the tool's schema, the result, and input/result previews. Right: the chain so far. Running a
tool happens in a worker; accepting it adds the step (``annotation.tasks.add_step``) and stores the
produced images as artifacts of that step.

In blind mode (human baseline) the reference chain is hidden and every call is recorded as events
of a human trajectory instead; the final answer closes the trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Label, OptionList, Static
from tui.widgets.header import Header
from textual.widgets.option_list import Option

from annotation import tasks as authoring
from tui.chain_steps import file_name, is_planned, record_step, run_tool, tool_set_for
from tui.typed_keys import after_typed_keys
from tui.undo import Edit, made_row
from tui.data import AssetRef, TaskDetail, task_detail
from tui.images import preview
from tui.messages import Failed, Result, Saved, TaskDetailLoaded
from tui.screens.base import WorkScreen
from tui.widgets.arg_form import ArgForm
from tui.widgets.footer import KeyFooter
from tui.widgets.image_pane import ImagePane
from tui.safe_text import data_content, one_line, visible


class StepList(OptionList):
    """The recorded chain; keys act on the highlighted step."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "screen.delete_step", "Delete step", id="step_list.delete_step"),
        Binding("ctrl+up", "screen.move_step(-1)", "Move up", id="step_list.move_step_minus1"),
        Binding("ctrl+down", "screen.move_step(1)", "Move down", id="step_list.move_step_1"),
        Binding("e", "screen.edit_thought", "Edit thought", id="step_list.edit_thought"),
        Binding("c", "screen.checkpoint_from_step", "Checkpoint", id="step_list.checkpoint_from_step"),
    ]


@dataclass
class StripPreviewLoaded(Result):
    """A shrunk input image for the strip's preview: its place in the strip, the image, its caption, and
    the original (a blob sha256, or the bytes of a blind attempt's image) for zoom."""

    WHAT: ClassVar[str] = "image"
    index: int
    image: Any
    caption: str
    source: bytes | str


QUERY_SHOWN = 400
"""Characters of the task's query above the tool form: two or three lines (the chain builder showed no
query at all, so a chain, or a blind attempt, was built without the question in sight)."""


class _ArgFormScroll(VerticalScroll, can_focus=False):
    """Scrolls the argument form to the focused field. Not a focus stop itself: tab from the tool list
    went to it first, and what was typed next (meant for the first argument) went nowhere."""


class ChainBuilderScreen(WorkScreen):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # see the chain builder part of chainmark.tcss
    BINDINGS = [
        Binding("escape", "back", "Back", id="chain_builder.back"),
        Binding("ctrl+r", "run", "Run", tooltip="Run tool", priority=True, id="chain_builder.run"),
        Binding("ctrl+l", "region", "Region", tooltip="Pick region", priority=True, id="chain_builder.region"),
        Binding("ctrl+s", "accept", "Accept", tooltip="Accept step", priority=True, id="chain_builder.accept"),
        Binding("ctrl+f", "final", "Final", tooltip="Final answer", priority=True, id="chain_builder.final"),
        Binding("ctrl+g", "guidelines", "Guide", tooltip="Guidelines", priority=True, id="chain_builder.guidelines"),
    ]

    def __init__(self, task_id: int, *, blind: bool = False) -> None:
        super().__init__()
        self.task_id = task_id
        self.blind = blind
        self.detail: TaskDetail | None = None
        self.tool_set = ""
        self.tool_name: str | None = None
        self.selected_image = 0
        self.pending: dict[str, Any] | None = None  # last run: tool, args, result, previews
        self.attempt_images: list[bytes] = []  # blind mode: images produced in this attempt
        self.attempt_log: list[str] = []
        self._previews: dict[int, Any] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="builder-body"):
            with Vertical(id="builder-left"):
                yield Static("Images", classes="section-title")
                yield OptionList(id="strip")
                yield Static("Tools", classes="section-title")
                yield OptionList(id="palette")
            with Vertical(id="builder-centre"):
                yield Static("", id="task-query")  # the question the chain (or the blind attempt) answers
                yield Static("", id="tool-help", classes="hint")
                with _ArgFormScroll(id="arg-form"):
                    yield ArgForm(id="args")
                with VerticalScroll(id="result-scroll"):  # a long OCR text scrolls instead of being cut off
                    yield Static("", id="result")
                with Horizontal(id="builder-images"):
                    yield ImagePane("input", classes="preview", id="input-preview")
                    yield ImagePane("result", classes="preview", id="result-preview")
                with Horizontal(classes="field-row"):
                    yield Label("thought")
                    yield Input(placeholder="why this step (saved with the step)", id="thought")
            with Vertical(id="steps"):
                yield Static("Blind attempt" if self.blind else "Reference chain", classes="section-title")
                yield StepList(id="step-list")
        yield KeyFooter()

    # ------------------------------------------------------------------ loading

    def refresh_data(self) -> None:
        task_id = self.task_id
        self.fetch(TaskDetailLoaded, lambda s: TaskDetailLoaded(task_detail(s, task_id, with_history=False)))

    @on(TaskDetailLoaded)
    def _task_loaded(self, message: TaskDetailLoaded) -> None:
        first = self.detail is None
        self.detail = message.detail
        self.sub_title = (
            f"task {message.detail.id} · blind attempt (human baseline)"
            if self.blind
            else f"task {message.detail.id} · revision {message.detail.revision}"
        )
        self.query_one("#task-query", Static).update(data_content(f"Q: {one_line(message.detail.query, QUERY_SHOWN)}"))
        if first:
            self._fill_palette()
        self._fill_strip()
        self._fill_steps()

    @on(StripPreviewLoaded)
    def _preview_loaded(self, message: StripPreviewLoaded) -> None:
        self._previews[message.index] = (message.image, message.source)
        if message.index == self.selected_image:
            self.query_one("#input-preview", ImagePane).show(message.image, message.caption, source=message.source)

    def _strip_refs(self) -> list[AssetRef]:
        assert self.detail is not None
        return list(self.detail.images) if self.blind else self.detail.image_sequence()

    def _fill_palette(self) -> None:
        from evaluation.tools import get_tool_set

        assert self.detail is not None
        self.tool_set = tool_set_for(self.detail)
        palette = self.query_one("#palette", OptionList)
        ts = get_tool_set(self.tool_set)
        palette.add_options([Option(_palette_label(t, self.detail.tools_offered), id=t.name) for t in ts.all_tools()])
        palette.highlighted = 0
        self.focus_when_untouched(palette)  # arrows pick a tool at once, unless the focus was moved meanwhile

    def _fill_strip(self) -> None:
        strip = self.query_one("#strip", OptionList)
        labels = [f"{i}: {r.label}" for i, r in enumerate(self._strip_refs())]
        base = len(labels)
        labels += [f"{base + i}: attempt output" for i in range(len(self.attempt_images))]
        labels = [visible(label, keep_newlines=True) for label in labels]  # as the options show them
        current = [str(strip.get_option_at_index(i).prompt) for i in range(strip.option_count)]
        if labels != current:
            self._previews.clear()  # indices may now name other images
            keep = self.selected_image
            strip.clear_options()
            strip.add_options([Option(data_content(text), id=str(i)) for i, text in enumerate(labels)])
            if labels:
                strip.highlighted = min(keep, len(labels) - 1)

    def _fill_steps(self) -> None:
        steps = self.query_one("#step-list", StepList)
        assert self.detail is not None
        highlighted = steps.highlighted
        steps.clear_options()
        if self.blind:
            steps.add_options(
                [Option(data_content(line)) for line in self.attempt_log] or [Option("no calls yet", disabled=True)]
            )
            return
        for s in self.detail.steps:
            if s.is_final:
                text = f"{s.ordinal + 1}. ANSWER {s.final_answer}"
            else:
                text = f"{s.ordinal + 1}. {s.tool_name} → {one_line(s.result_text, 40)}"
            steps.add_option(Option(data_content(text), id=str(s.id)))
        if self.detail.steps:
            steps.highlighted = min(highlighted or 0, len(self.detail.steps) - 1)

    @on(OptionList.OptionHighlighted, "#strip")
    def _image_chosen(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is None:
            return
        self.selected_image = int(event.option.id)
        form = self.query_one(ArgForm)
        for f in form.fields:
            if f.is_image:
                form.set_value(f.path, self._image_arg(f.type))
        self._load_preview(self.selected_image)

    def _load_preview(self, index: int) -> None:
        if index in self._previews:
            image, source = self._previews[index]
            self.query_one("#input-preview", ImagePane).show(image, f"input: image {index}", source=source)
            return
        refs = self._strip_refs()
        cm = self.cm
        if index < len(refs):
            ref = refs[index]
            self.fetch(
                StripPreviewLoaded,
                lambda s: StripPreviewLoaded(
                    index, preview(cm.blobs.get(ref.sha256, s)), f"input: image {index}", ref.sha256
                ),
            )
        elif index - len(refs) < len(self.attempt_images):
            data = self.attempt_images[index - len(refs)]
            self.fetch(
                StripPreviewLoaded, lambda s: StripPreviewLoaded(index, preview(data), f"input: image {index}", data)
            )

    def _image_arg(self, kind: str) -> Any:
        if kind == "integer":
            return self.selected_image
        refs = self._strip_refs()
        if self.selected_image < len(refs):
            return file_name(refs[self.selected_image], self.selected_image)
        return f"image/image_{self.selected_image}.png"

    @on(OptionList.OptionHighlighted, "#palette")
    async def _tool_chosen(self, event: OptionList.OptionHighlighted) -> None:
        from evaluation.tools import get_tool_set

        self.tool_name = event.option.id
        tool = get_tool_set(self.tool_set).get(self.tool_name or "")
        self.query_one("#tool-help", Static).update(
            f"[b]{tool.name}[/b] ({tool.category}, {tool.kind}): {tool.description[:220]}"
        )
        form = self.query_one(ArgForm)
        await form.set_tool(tool.parameters)
        self._prefill_image()

    def _prefill_image(self) -> None:
        form = self.query_one(ArgForm)
        for f in form.fields:
            if f.is_image:
                form.set_value(f.path, self._image_arg(f.type))

    @on(OptionList.OptionSelected, "#palette")
    def _tool_selected(self) -> None:
        form = self.query_one(ArgForm)
        target = next((f for f in form.fields if not f.is_image), None)
        if target is not None:
            form.query_one(f"#{target.widget_id}").focus()

    # ------------------------------------------------------------------ running a tool

    @after_typed_keys
    def action_run(self) -> None:
        if self.detail is None or self.tool_name is None:
            self.notify("pick a tool first", severity="warning")
            return
        try:
            args = self.query_one(ArgForm).values()
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        tool_set, tool_name, refs, cm = self.tool_set, self.tool_name, self._strip_refs(), self.cm
        attempt = list(self.attempt_images)
        blind, task_id, actor = self.blind, self.task_id, self.cm.actor or "annotator"
        planned = is_planned(tool_set, tool_name)
        description = self.query_one("#thought", Input).value.strip()
        self.query_one("#result", Static).update(f"{'checking' if planned else 'running'} {tool_name}…")

        def run(session):  # type: ignore[no-untyped-def]
            result = run_tool(
                session, cm.blobs, refs, tool_set, tool_name, args, description=description, extra_images=attempt
            )
            if blind:
                from tui import baseline

                traj = baseline.human_trajectory(session, task_id, actor)
                baseline.record_tool_call(
                    session, traj, tool_name, args, result.ok, result.text, result.data, result.asset_ids, result.error
                )
            return {"tool": tool_name, "args": args, "result": result, "previews": [preview(b) for b in result.images]}

        self.save("run", run)

    @on(Failed)
    def _run_failed(self, message: Failed) -> None:
        """A run that raised (an input image's file gone, the database refusing the write) says so where
        "running …" was shown, instead of leaving it there as if the tool were still at work."""
        if message.what == "run":
            self.query_one("#result", Static).update(data_content(f"✗ {self.tool_name or 'the tool'}: {message.error}"))

    @on(Saved)
    def saved(self, message: Saved) -> None:
        if message.what != "run":
            return
        self.pending = message.data
        result = message.data["result"]
        if result.ok:
            text = result.text.strip() or "(no text)"
            n = len(result.images)
            self.query_one("#result", Static).update(
                data_content(
                    f"✓ {result.tool}: {text[:400]}"
                    + (f"\n{n} image(s) produced" if n else "")
                    + ("" if self.blind else "\nctrl+s accepts this as the next step")
                )
            )
        else:
            self.query_one("#result", Static).update(data_content(f"✗ {result.tool}: {result.error}"))
        pane = self.query_one("#result-preview", ImagePane)
        pane.show(
            message.data["previews"][0] if message.data["previews"] else None,
            f"result of {result.tool}",
            source=result.images[0] if result.images else None,
        )
        if self.blind:
            self.attempt_log.append(
                f"{len(self.attempt_log) + 1}. {result.tool}"
                f"{'' if result.ok else ' ✗'} → {(result.text or result.error or '')[:40]}"
            )
            if result.ok:
                self.attempt_images.extend(result.images)
            self._fill_strip()
            self._fill_steps()

    @after_typed_keys
    def action_region(self) -> None:
        from tui.screens.region_picker import RegionPickerScreen, bbox_argument, from_pixels

        form = self.query_one(ArgForm)
        if not form.ready:
            self.notify("the tool's inputs are still being set up: try again", severity="warning")
            return
        field = form.bbox_field()
        image = (self._previews.get(self.selected_image) or (None, None))[0]
        if field is None or image is None:
            self.notify(
                "this tool has no bbox argument" if field is None else "the image is still loading", severity="warning"
            )
            return
        size = self._image_size(self.selected_image) or image.size
        box = (250, 250, 750, 750)
        try:
            current = form.values().get(field.path)
            if isinstance(current, str):
                current = [float(c) for c in current.strip("()[] ").split(",")]
            if isinstance(current, list) and len(current) == 4:
                box = tuple(int(c) for c in current) if field.bbox_normalised else from_pixels(tuple(current), *size)
        except (ValueError, TypeError):
            pass

        def chosen(value):  # type: ignore[no-untyped-def]
            if value is not None:
                form.set_value(field.path, bbox_argument(value, field.bbox_normalised, field.type == "string", size))

        self.app.push_screen(RegionPickerScreen(image, box, size), chosen)

    def _image_size(self, index: int) -> tuple[int, int] | None:
        refs = self._strip_refs()
        if index < len(refs) and refs[index].width and refs[index].height:
            return (refs[index].width or 0, refs[index].height or 0)
        if index - len(refs) < len(self.attempt_images) and index >= len(refs):
            from PIL import Image
            import io

            with Image.open(io.BytesIO(self.attempt_images[index - len(refs)])) as im:
                return im.size
        return None

    # ------------------------------------------------------------------ recording the chain

    @after_typed_keys
    def action_accept(self) -> None:
        if self.blind:
            self.notify("in a blind attempt every call is recorded; ctrl+f gives the final answer")
            return
        pending = self.pending
        if pending is None or not pending["result"].ok:
            self.notify("run a tool successfully first (ctrl+r)", severity="warning")
            return
        thought = self.query_one("#thought", Input).value.strip() or None
        task_id, cm = self.task_id, self.cm
        result = pending["result"]

        def accept(session):  # type: ignore[no-untyped-def]
            recorded = record_step(session, cm.blobs, task_id, pending["tool"], pending["args"], result, thought)
            step_id, link_ids = recorded.step_id, recorded.link_ids
            from store.models import ReferenceStep

            made = made_row(session, ReferenceStep, step_id)
            return Edit(
                f"add step {pending['tool']}", "remove_step", {"step_id": step_id, "link_ids": link_ids}, made=made
            )

        self.pending = None
        self.query_one("#thought", Input).value = ""
        self.query_one("#result", Static).update(f"accepted {pending['tool']} as the next step")
        self.save("accept step", accept)

    @after_typed_keys
    def action_final(self) -> None:
        from tui.screens.prompt import PromptScreen

        def answered(text: str | None) -> None:
            if text:
                self._final(text)

        self.app.push_screen(PromptScreen("Final answer", placeholder="the answer the chain reaches"), answered)

    def _final(self, text: str) -> None:
        task_id, actor = self.task_id, self.cm.actor or "annotator"
        thought = self.query_one("#thought", Input).value.strip() or None
        if self.blind:

            def finish(session):  # type: ignore[no-untyped-def]
                from tui import baseline

                baseline.finish(session, baseline.human_trajectory(session, task_id, actor), text)

            self.attempt_log.append(f"ANSWER {text}")
            self.save("final answer", finish)
            self._fill_steps()
            return

        def add(session):  # type: ignore[no-untyped-def]
            existing = [s for s in authoring.steps_of(session, task_id) if s.is_final]
            if existing:
                old = existing[0].final_answer
                step_id = existing[0].id
                authoring.edit_step(session, step_id, final_answer=text, thought=thought or existing[0].thought)
                return Edit("edit final answer", "edit_step", {"step_id": step_id, "fields": {"final_answer": old}})
            step = authoring.add_step(session, task_id, thought=thought, final_answer=text)
            return Edit(
                "add final answer", "remove_step", {"step_id": step.id}, made=made_row(session, type(step), step.id)
            )

        self.save("final answer", add)

    def _highlighted_step(self) -> Any:
        steps = self.query_one("#step-list", StepList)
        if self.blind or self.detail is None or steps.highlighted is None:
            return None
        option = steps.get_option_at_index(steps.highlighted)
        return next((s for s in self.detail.steps if str(s.id) == option.id), None)

    @on(OptionList.OptionHighlighted, "#step-list")
    def _step_highlighted(self) -> None:
        step = self._highlighted_step()
        if step is None or self.pending is not None:
            return
        if step.is_final:
            self.query_one("#result", Static).update(
                data_content(f"step {step.ordinal + 1}: final answer {step.final_answer}")
            )
            return
        self.query_one("#result", Static).update(
            data_content(
                f"step {step.ordinal + 1}: {step.tool_name}({step.tool_args}) — thought: {step.thought or '—'}\n"
                f"→ {step.result_text[:300]}"
            )
        )

    def action_delete_step(self) -> None:
        step = self._highlighted_step()
        if step is None:
            return

        def delete(session):  # type: ignore[no-untyped-def]
            snapshot = authoring.delete_step(session, step.id)
            return Edit(f"delete step {step.ordinal + 1}", "restore_step", {"snapshot": snapshot})

        self.save("delete step", delete)

    def action_move_step(self, delta: int) -> None:
        step = self._highlighted_step()
        if step is None:
            return
        old, new = step.ordinal, max(0, step.ordinal + delta)

        def move(session):  # type: ignore[no-untyped-def]
            authoring.move_step(session, step.id, new)
            return Edit(f"move step {old + 1}", "move_step", {"step_id": step.id, "ordinal": old})

        steps = self.query_one("#step-list", StepList)
        steps.highlighted = max(0, (steps.highlighted or 0) + delta)
        self.save("move step", move)

    def action_edit_thought(self) -> None:
        from tui.screens.prompt import PromptScreen

        step = self._highlighted_step()
        if step is None:
            return

        def edited(text: str | None) -> None:
            if text is None:
                return
            old = step.thought or None

            def apply(session):  # type: ignore[no-untyped-def]
                authoring.edit_step(session, step.id, thought=text)
                return Edit("edit thought", "edit_step", {"step_id": step.id, "fields": {"thought": old}})

            self.save("edit thought", apply)

        self.app.push_screen(PromptScreen(f"Thought for step {step.ordinal + 1}", step.thought), edited)

    def action_checkpoint_from_step(self) -> None:
        from tui.screens.checkpoint_editor import CheckpointEditorScreen

        step = self._highlighted_step()
        if step is not None:
            self.app.push_screen(CheckpointEditorScreen(self.task_id, step_id=step.id))

    def action_guidelines(self) -> None:
        from tui.screens.guidelines import GuidelinesScreen

        if self.detail is not None:
            self.app.push_screen(GuidelinesScreen(self.detail.benchmark, self.detail.guidelines))

    def unsaved_changes(self) -> list[str]:
        lost = []
        if not self.blind and self.pending is not None and self.pending["result"].ok:
            lost.append(f"the {self.pending['tool']} run is not accepted as a step (ctrl+s accepts it)")
        if self.query_one("#thought", Input).value.strip():
            lost.append("the thought you typed")
        return lost

    def action_back(self) -> None:
        self.leave()


def _palette_label(tool: Any, offered: list[str]) -> str:
    """A tool in the palette: its kind, and "not offered" when the task's tool list leaves it out (a step
    with it would be a chain the model cannot follow; the editor warns about it too)."""
    return f"{tool.name}  ·{tool.kind[0]}" + ("  (not offered)" if offered and tool.name not in offered else "")
