"""Drafting aids screen: the model's description of the raw image beside the annotator's notes, and
the step-wise oracle check. Both calls run in workers; results are saved on the task."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static, TextArea
from tui.widgets.header import Header

from annotation import tasks as authoring
from evaluation import drafting
from tui.typed_keys import after_typed_keys
from tui.data import task_detail
from tui.messages import Failed, Saved, TaskDetailLoaded
from tui.screens.base import WorkScreen
from tui.widgets.footer import KeyFooter
from tui.safe_text import data_content
from tui.widgets.layered_text_area import LayeredTextArea


class DraftingScreen(WorkScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="drafting.back"),
        Binding("ctrl+t", "describe", "Describe", tooltip="Describe image", priority=True, id="drafting.describe"),
        Binding("ctrl+r", "oracle", "Oracle", tooltip="Oracle check", priority=True, id="drafting.oracle"),
        Binding("ctrl+s", "save_notes", "Save", tooltip="Save notes", priority=True, id="drafting.save_notes"),
    ]

    def __init__(self, task_id: int) -> None:
        super().__init__()
        self.task_id = task_id
        self._stored_notes: str | None = None  # the notes as stored (None until loaded)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="builder-body"):
            with Vertical():
                yield Static("What the model sees (ctrl+t)", classes="section-title")
                yield Static("", id="model-description")
                yield Static("Oracle check (ctrl+r)", classes="section-title")
                yield Static("", id="oracle")
            with Vertical():
                yield Static("Your notes (ctrl+s saves)", classes="section-title")
                yield LayeredTextArea(id="notes", soft_wrap=True)
        yield KeyFooter()

    def refresh_data(self) -> None:
        task_id = self.task_id
        self.fetch(TaskDetailLoaded, lambda s: TaskDetailLoaded(task_detail(s, task_id, with_history=False)))

    @on(TaskDetailLoaded)
    def loaded(self, message: TaskDetailLoaded) -> None:
        d = message.detail
        self.sub_title = f"task {d.id} · drafting aids"
        info = d.meta.get("drafting") or {}
        self.query_one("#model-description", Static).update(data_content(info.get("description") or "not asked yet"))
        oracle = info.get("oracle")
        self.query_one("#oracle", Static).update(
            data_content(
                "not run yet" if not oracle else f"{_verdict(oracle.get('passed'))}; model said: {oracle['answer']}"
            )
        )
        notes = self.query_one("#notes", TextArea)
        if self._stored_notes is None and not notes.text and info.get("notes"):
            notes.load_text(info["notes"])
        self._stored_notes = info.get("notes") or ""

    @after_typed_keys
    def action_describe(self) -> None:
        task_id, cm = self.task_id, self.cm
        self.query_one("#model-description", Static).update("asking the model…")

        def inputs(session):  # type: ignore[no-untyped-def]
            task = authoring.get_task(session, task_id)
            ep = drafting.endpoint_for(session, task)
            images = authoring.assets_of(session, task_id, "query_image")
            if not images:
                raise drafting.DraftingError("the task has no image to describe")
            from store.models import Asset

            asset = session.get(Asset, images[0].asset_id)
            assert asset is not None
            return ep, cm.blobs.get(asset.sha256, session), asset.mime

        def ask() -> Any:
            ep, image, mime = cm.read(inputs)
            text = drafting.describe_image(ep, image, mime)

            def store(session):  # type: ignore[no-untyped-def]
                drafting.save_drafting(session, task_id, "description", text)
                drafting.save_drafting(session, task_id, "endpoint", ep.name)

            return store

        self._ask_model("describe", ask)

    @after_typed_keys
    def action_oracle(self) -> None:
        task_id, cm = self.task_id, self.cm
        self.query_one("#oracle", Static).update("running the oracle check…")

        def inputs(session):  # type: ignore[no-untyped-def]
            task = authoring.get_task(session, task_id)
            return (
                drafting.endpoint_for(session, task),
                task.query,
                authoring.steps_of(session, task_id),
                dict(task.answer_spec or {}),
                task.revision,
            )

        def ask() -> Any:
            ep, query, steps, spec, revision = cm.read(inputs)
            answer = drafting.oracle_answer(ep, query, steps)
            outcome = {
                "answer": answer,
                "passed": drafting.reaches(answer, spec),
                "endpoint": ep.name,
                "revision": revision,
            }
            return lambda session: drafting.save_drafting(session, task_id, "oracle", outcome)

        self._ask_model("oracle check", ask)

    def _ask_model(self, what: str, ask: Any) -> None:
        """``ask()`` on a worker thread: it reads in a short transaction, calls the model outside any
        transaction (a slow model never holds the database or the app's other saves), and returns
        the write that stores the answer, which runs as a normal save."""

        cm = self.cm  # the screen may be left before the model answers; the answer is kept all the same

        def work() -> None:
            try:
                store = ask()
            except Exception as exc:  # noqa: BLE001 - every failure becomes a visible message
                self.post_message(Failed(what, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
                return
            cm.call_from_thread(self.save, what, store)

        self.run_past_leaving(work, what, group="model")

    @after_typed_keys
    def action_save_notes(self) -> None:
        self._save_notes()

    def _save_notes(self) -> None:
        text, task_id = self.query_one("#notes", TextArea).text, self.task_id
        self.save("notes", lambda s: drafting.save_drafting(s, task_id, "notes", text))

    def flush_pending(self) -> None:
        """Leaving saves the notes (they are the annotator's own words; never drop them). At once, not
        through ``after_typed_keys``: quitting waits for the saves started here, and a save still on
        its way through the field's queue was not one of them (ctrl+q right after typing lost the notes)."""
        if self._stored_notes is not None and self.query_one("#notes", TextArea).text != self._stored_notes:
            self._stored_notes = self.query_one("#notes", TextArea).text
            self._save_notes()

    @on(Saved)
    def saved(self, message: Saved) -> None:
        self.notify(f"{message.what}: saved")

    def action_back(self) -> None:
        self.leave()


def _verdict(passed: bool | None) -> str:
    if passed is None:
        return "? this kind of answer needs a judge to check"
    return "✓ reached the answer" if passed else "✗ did not reach the answer"
