"""Run launcher: benchmark, subset, endpoint, mode, concurrency and budgets, then start.

Starting hands the run to the app's run manager and opens the monitor; the run does not belong to
this screen, so leaving it (or the monitor) does not stop the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Checkbox, Input, Label, Select, Static
from tui.widgets.header import Header

from evaluation.harness import Budgets, RunSpec
from tui.typed_keys import after_typed_keys
from tui.messages import Failed, Result
from tui.screens.base import WorkScreen
from tui.screens.runs.data import (
    LaunchChoices,
    launch_choices,
    optional_number,
    parse_ids,
)
from tui.screens.runs.manager import run_manager
from tui.widgets.footer import KeyFooter
from tui.widgets.selection import chosen as selected_value
from tui.widgets.selection import data_options

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")


@dataclass
class LaunchChoicesLoaded(Result):
    """Benchmarks, endpoints and modes to launch a run with."""

    WHAT: ClassVar[str] = "choices"
    choices: LaunchChoices


class LaunchScreen(WorkScreen):
    CSS_PATH = CSS
    AUTO_FOCUS = "#bench"  # the first field, not the scrolling form around it: Enter opens the list
    BINDINGS = [
        Binding("ctrl+s", "start", "Start run", priority=True, id="launch.start"),
        Binding("escape", "back", "Back", id="launch.back"),
    ]

    def __init__(self, benchmark: str = "") -> None:
        super().__init__()
        self.initial_benchmark = benchmark
        # Keys typed from now on (the Enter right after the key that opened this form too) wait until
        # the drop-downs have their choices, then act in order (``tui.held_keys``).
        self.held_keys = self.cm.hold_keys()

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="launch-form"):
            yield Static("New run", classes="section-title")
            yield Static("loading benchmarks, endpoints and modes…", id="launch-loading")
            for label, widget in (
                ("benchmark", Select([], prompt="benchmark", id="bench")),
                ("task ids", Input(placeholder="e.g. 3,5,9-12 — empty: all tasks", id="task-ids")),
                ("limit", Input(placeholder="first N tasks only", id="limit")),
                ("endpoint", Select([], prompt="endpoint (add with `chainmark endpoints add`)", id="endpoint")),
                ("mode", Select([], prompt="mode", id="mode")),
                ("concurrency", Input("4", id="concurrency")),
                ("max rounds", Input(placeholder="mode default", id="max-rounds")),
                ("max tool calls", Input(placeholder="mode default", id="max-tool-calls")),
                ("max tokens", Input(placeholder="no limit", id="max-tokens")),
                ("max seconds", Input("600", id="max-seconds")),
                ("run name", Input(placeholder="optional", id="run-name")),
            ):
                with Horizontal(classes="field-row"):
                    yield Label(label)
                    yield widget
            yield Checkbox("replay only (answer from the replay cache, no model calls)", id="replay")
            yield Static("", id="launch-error", classes="error-text")
            yield Button("Start run  (ctrl+s)", id="start", variant="primary")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.fetch(LaunchChoicesLoaded, lambda s: LaunchChoicesLoaded(launch_choices(s)))

    @on(LaunchChoicesLoaded)
    def loaded(self, message: LaunchChoicesLoaded) -> None:
        c: LaunchChoices = message.choices
        bench = self.query_one("#bench", Select)
        bench.set_options(
            data_options(
                (f"{name}  ({n} task{'' if n == 1 else 's'}{', tools ' + ts if ts else ''})", name)
                for name, n, ts in c.benchmarks
            )
        )
        if self.initial_benchmark in [b[0] for b in c.benchmarks]:
            bench.value = self.initial_benchmark
        endpoint = self.query_one("#endpoint", Select)
        endpoint.set_options(data_options((f"{name}  ({where})", name) for name, where in c.endpoints))
        if len(c.endpoints) == 1:
            endpoint.value = c.endpoints[0][0]
        mode = self.query_one("#mode", Select)
        mode.set_options([(m, m) for m in c.modes])
        if "atomic" in c.modes:
            mode.value = "atomic"
        self._ready()

    @on(Failed)
    def _choices_failed(self, message: Failed) -> None:
        """The choices could not be read (the base screen says why): the held keys act on the form as it is."""
        if message.what == LaunchChoicesLoaded.WHAT:
            self._ready()

    def _ready(self) -> None:
        self.query_one("#launch-loading", Static).display = False
        if self.held_keys.holding:
            self.run_worker(self.held_keys.release(), group="held-keys", exclusive=True, exit_on_error=False)

    def on_unmount(self) -> None:
        if self.held_keys.holding:  # gone before its choices came: hold nothing more
            self.held_keys.drop()

    def _value(self, selector: str) -> str:
        return self.query_one(selector, Input).value

    def spec(self) -> RunSpec:
        """The form as a run spec; raises ValueError naming the field that is wrong."""

        def chosen(selector: str, what: str) -> str:
            value = selected_value(self.query_one(selector, Select))
            if value is None:
                raise ValueError(f"choose {'an' if what[0] in 'aeiou' else 'a'} {what}")
            return str(value)

        concurrency = optional_number(self._value("#concurrency"), "concurrency") or 1
        budgets = Budgets(
            optional_number(self._value("#max-rounds"), "max rounds"),
            optional_number(self._value("#max-tool-calls"), "max tool calls"),
            optional_number(self._value("#max-tokens"), "max tokens"),
            optional_number(self._value("#max-seconds"), "max seconds", float),
        )
        return RunSpec(
            benchmark=chosen("#bench", "benchmark"),
            endpoint=chosen("#endpoint", "endpoint"),
            mode=chosen("#mode", "mode"),
            concurrency=concurrency,
            limit=optional_number(self._value("#limit"), "limit"),
            budgets=budgets,
            replay=self.query_one("#replay", Checkbox).value,
            name=self._value("#run-name").strip() or None,
            task_ids=parse_ids(self._value("#task-ids")),
        )

    @after_typed_keys
    def action_start(self) -> None:
        try:
            spec = self.spec()
        except ValueError as exc:
            self.query_one("#launch-error", Static).update(str(exc))
            return
        live = run_manager(self.cm).start(spec)
        from tui.screens.runs.monitor import RunMonitorScreen

        self.app.pop_screen()
        below = self.app.screen
        if isinstance(below, RunMonitorScreen):
            below.follow(live.key)
        else:
            self.app.push_screen(RunMonitorScreen(follow=live.key))

    @on(Button.Pressed, "#start")
    def _pressed(self) -> None:
        self.action_start()

    def action_back(self) -> None:
        self.app.pop_screen()
