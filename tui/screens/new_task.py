"""A small modal to start a task: which benchmark, what query; opens the editor on the new draft."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Input, Label, TextArea

from annotation.tasks import create_task, ensure_benchmark
from tui.app import Edit
from tui.messages import Saved
from tui.screens.base import WorkScreen


class NewTaskScreen(WorkScreen):
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "create", "Create")]

    def __init__(self, benchmark: str = "") -> None:
        super().__init__(classes="modal")
        self.benchmark = benchmark

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("New task", classes="section-title")
            yield Label("Benchmark (created if new)")
            yield Input(self.benchmark, placeholder="benchmark name", id="benchmark")
            yield Label("Query")
            yield TextArea(id="query")
            yield Button("Create  ctrl+s", id="create", variant="primary")

    def on_screen_resume(self) -> None:  # nothing to load
        pass

    def on_mount(self) -> None:
        self.query_one("#query" if self.benchmark else "#benchmark").focus()

    def action_cancel(self) -> None:
        self.app.pop_screen()

    @on(Button.Pressed, "#create")
    def action_create(self) -> None:
        bench = self.query_one("#benchmark", Input).value.strip()
        query = self.query_one("#query", TextArea).text.strip()
        if not bench or not query:
            self.notify("a task needs a benchmark and a query", severity="error")
            return

        def create(session):  # type: ignore[no-untyped-def]
            from store.models import Task

            b = ensure_benchmark(session, bench) if _missing(session, bench) else _get(session, bench)
            task = create_task(session, b, query)
            task_id = task.id

            def undo(s):  # type: ignore[no-untyped-def]
                t = s.get(Task, task_id)
                if t is not None:
                    s.delete(t)

            return task_id, Edit(f"create task {task_id}", undo)

        self.save("create task", create)

    @on(Saved)
    def _created(self, message: Saved) -> None:
        message.stop()
        from tui.screens.task_editor import TaskEditorScreen

        self.app.switch_screen(TaskEditorScreen(message.data))


def _missing(session, name: str) -> bool:  # type: ignore[no-untyped-def]
    from annotation.tasks import AuthoringError, get_benchmark

    try:
        get_benchmark(session, name)
        return False
    except AuthoringError:
        return True


def _get(session, name: str):  # type: ignore[no-untyped-def]
    from annotation.tasks import get_benchmark

    return get_benchmark(session, name)
