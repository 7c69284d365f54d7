"""A small modal to start a task: which benchmark (chosen from the existing ones, never created by a
typo), what query; opens the editor on the new draft. Benchmarks are made on purpose with
``chainmark benchmarks add NAME --format F``, which gives them their format and tool set."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Label, Select, Static, TextArea

from annotation.tasks import create_task, get_benchmark
from tui.undo import Edit, made_row
from tui.messages import Result, Saved
from tui.screens.base import WorkScreen
from tui.widgets.selection import choose, chosen, data_options
from tui.widgets.layered_text_area import LayeredTextArea
from tui.widgets.footer import KeyFooter

NO_BENCHMARKS = "No benchmarks yet. Create one first: chainmark benchmarks add NAME --format gta"


@dataclass
class BenchmarksLoaded(Result):
    """The benchmarks a task can go into: (name, format, tool set)."""

    WHAT: ClassVar[str] = "benchmarks"
    benchmarks: list[tuple[str, str, str | None]]


class NewTaskScreen(WorkScreen):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="new_task.cancel"),
        Binding("ctrl+s", "create", "Create", id="new_task.create"),
    ]

    def __init__(self, benchmark: str = "") -> None:
        super().__init__(classes="modal")
        self.benchmark = benchmark

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("New task", classes="section-title")
            yield Label("Benchmark")
            yield Select([], prompt="choose a benchmark", id="benchmark")
            yield Static("", id="benchmark-hint", classes="hint")
            yield Label("Query")
            yield LayeredTextArea(id="query")
            yield Button("Create  ctrl+s", id="create", variant="primary")
        yield KeyFooter()

    def on_screen_resume(self) -> None:  # loads once, on mount
        pass

    def on_mount(self) -> None:
        from sqlmodel import select

        from store.models import Benchmark

        self.query_one("#query" if self.benchmark else "#benchmark").focus()
        self.fetch(
            BenchmarksLoaded,
            lambda s: BenchmarksLoaded(
                [
                    (b.name, b.source_format, b.tool_set)
                    for b in s.exec(select(Benchmark).order_by(Benchmark.name)).all()
                ]
            ),
        )

    @on(BenchmarksLoaded)
    def _benchmarks(self, message: BenchmarksLoaded) -> None:
        select = self.query_one("#benchmark", Select)
        with self.prevent(Select.Changed):
            select.set_options(
                data_options(
                    (f"{name} · {fmt}" + (f" · tools {tools}" if tools else ""), name)
                    for name, fmt, tools in message.benchmarks
                )
            )
            choose(select, self.benchmark or None)
        if not message.benchmarks:
            self.query_one("#benchmark-hint", Static).update(NO_BENCHMARKS)

    def action_cancel(self) -> None:
        self.confirm_discard(self.app.pop_screen)

    def unsaved_changes(self) -> list[str]:
        return ["the query you typed"] if self.query_one("#query", TextArea).text.strip() else []

    @on(Button.Pressed, "#create")
    def action_create(self) -> None:
        bench = chosen(self.query_one("#benchmark", Select))
        query = self.query_one("#query", TextArea).text.strip()
        if bench is None or not query:
            self.notify("a task needs a benchmark (from the list) and a query", severity="error")
            return

        def create(session):  # type: ignore[no-untyped-def]

            task = create_task(session, get_benchmark(session, str(bench)), query)
            task_id = task.id
            made = made_row(session, type(task), task_id)
            return task_id, Edit(f"create task {task_id}", "delete_task", {"task_id": task_id}, made=made)

        self.save("create task", create)

    @on(Saved)
    def _created(self, message: Saved) -> None:
        message.stop()
        from tui.screens.task_editor import TaskEditorScreen

        self.app.switch_screen(TaskEditorScreen(message.data))
