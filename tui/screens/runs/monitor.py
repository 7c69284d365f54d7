"""Run monitor: every run with its counts, and live progress of the one under the cursor.

Live numbers (done / failed / running, tokens, model calls per second, errors) come from the app's
run manager and are polled twice a second; the table of runs is re-read from the database while a
run is going, and while the selected run has queued judging open (a per-judge table below, with
the numbers `runs show` prints, from the same function). ``c`` cancels (tasks in flight finish,
nothing new starts; the run's queued judging is cancelled too, as ``runs cancel`` does), ``r``
resumes a stopped run where it stopped, ``f`` also retries its failed tasks, ``enter`` opens its
trajectories.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, ProgressBar, Static
from tui.widgets.header import Header

from annotation.review.annotators import run_refusal
from evaluation.harness.lease import RESUME_HINT
from evaluation.judges import queue as judge_queue
from tui.messages import Result, Saved
from tui.safe_text import data_text, visible
from tui.screens.base import WorkScreen
from tui.screens.runs.data import RunRow, first_trajectory, run_rows
from tui.screens.runs.manager import LiveRun, run_manager
from tui.widgets.footer import KeyFooter
from tui.widgets.review.event_text import clip

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")
JUDGING_CANCEL = "cancelling queued judging"
JUDGING_COLUMNS = ("judge", "mode", "judged", "failed", "cancelled", "open", "running", "workers")
NAME_WIDTH, BENCHMARK_WIDTH = 12, 20  # most columns a run name and a benchmark name take in the run list
NARROW = 120  # columns below which the live panel gives the run list more room


@dataclass
class RunRowsLoaded(Result):
    """Every run with its progress (and the errors of the selected one)."""

    WHAT: ClassVar[str] = "runs"
    rows: list[RunRow]
    refusal: str | None = None  # why the person at the keyboard may not start, resume or cancel runs


@dataclass
class FirstTrajectoryLoaded(Result):
    """The run's first trajectory to open (None: it has none yet)."""

    WHAT: ClassVar[str] = "trajectory"
    trajectory_id: int | None


class RunMonitorScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("n", "launch", "New run", id="run_monitor.launch"),
        Binding("c", "cancel", "Cancel run", id="run_monitor.cancel"),
        Binding("r", "resume", "Resume", id="run_monitor.resume"),
        Binding("f", "retry_failed", "Retry failed", id="run_monitor.retry_failed"),
        Binding("enter", "open", "Trajectories", id="run_monitor.open"),
        Binding("space", "mark", "Mark to compare", id="runs.mark"),
        Binding("v", "compare", "Compare marked", id="runs.compare"),
        Binding("escape", "back", "Back", id="run_monitor.back"),
    ]

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]  # narrow: the run list keeps more room

    def __init__(self, follow: int | None = None) -> None:
        super().__init__()
        self.follow_key = follow
        self.rows: list[RunRow] = []
        self.refusal: str | None = "still reading who may run what; try again in a moment"  # until loaded
        self.selected: int | None = None
        self._db_tick = 0
        self._active: set[int] = set()
        self.marked: list[int] = []  # runs chosen for comparison, in the order they were marked

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="runs-body"):
            yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="run-live"):
                yield Static("", id="run-title")
                yield ProgressBar(id="run-bar", show_eta=False)
                yield Static("", id="run-stats")
                yield Static("Errors", classes="section-title")
                with VerticalScroll(id="run-errors-scroll"):
                    yield Static("", id="run-errors")
        with Vertical(id="run-judging-box"):
            yield Static("", id="run-judging-title", classes="section-title")
            yield DataTable(id="run-judging", cursor_type="none", show_cursor=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        for label, width in (
            ("run", 4),
            ("name", 12),
            ("benchmark", 9),
            ("endpoint", 9),
            ("mode", 6),
            ("status", 10),  # "cancelling", the longest state a run shows
            ("done", 6),
            ("failed", 6),
            ("tokens", 8),
        ):
            table.add_column(label, width=width)
        judging = self.query_one("#run-judging", DataTable)
        for label in JUDGING_COLUMNS:
            judging.add_column(label, key=label)
        self.query_one("#run-judging-box").display = False
        table.focus()
        self.set_interval(0.5, self._tick)

    @property
    def manager(self):  # type: ignore[no-untyped-def]
        return run_manager(self.cm)

    # ------------------------------------------------------------------ data

    def refresh_data(self) -> None:
        selected, actor = self.selected, self.cm.actor
        self.fetch(
            RunRowsLoaded,
            lambda s: RunRowsLoaded(run_rows(s, with_errors_of=selected, viewer=actor), run_refusal(s, actor)),
        )

    def follow(self, key: int) -> None:
        """Select the run a launcher just started (its id is known once the worker created it)."""
        self.follow_key = key
        self._tick()

    def _tick(self) -> None:
        if self.follow_key is not None:
            live = next((r for r in self.manager.snapshot() if r.key == self.follow_key), None)
            if live is not None and live.run_id is not None:
                self.selected = live.run_id
                self.follow_key = None
                self.refresh_data()
            elif live is not None and live.state == "failed":
                self.follow_key = None
                self.notify(live.error or "the run did not start", title="run failed", severity="error", timeout=10)
        active = {r.key for r in self.manager.snapshot() if r.active}
        self._db_tick += 1
        # a run may be executed by another terminal: keep reading while any could be going
        # … and while queued judging of the selected run is open (workers on any host judge it)
        elsewhere = any(r.status in ("pending", "running") or any(j.open for j in r.judging) for r in self.rows)
        if ((active or elsewhere) and self._db_tick % 4 == 0) or self._active - active:  # going, or just ended
            self.refresh_data()
        self._active = active
        self._show_live()

    def _fit_columns(self, table: DataTable) -> None:
        """Name and benchmark as wide as their longest value (within bounds): runs without names left
        an empty 12-column name column that pushed the benchmark out of an 80-column terminal."""
        for index, (least, most, values) in (
            (1, (len("name"), NAME_WIDTH, [r.name or "" for r in self.rows])),
            (2, (len("benchmark"), BENCHMARK_WIDTH, [r.benchmark for r in self.rows])),
        ):
            table.ordered_columns[index].width = max([least, *(min(cell_len(v), most) for v in values)])

    @on(RunRowsLoaded)
    def loaded(self, message: RunRowsLoaded) -> None:
        self.rows, self.refusal = message.rows, message.refusal
        table = self.query_one("#runs-table", DataTable)
        ids = [r.id for r in self.rows]
        # Refilling the table moves its cursor (to row 0, then back): those moves are not the user's, and
        # acting on them made the selection jump for a moment, so `space` could mark the wrong run.
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            self._fit_columns(table)
            for r in self.rows:
                table.add_row(
                    self._run_cell(r.id),
                    Text(clip(r.name, NAME_WIDTH)),
                    data_text(r.benchmark, keep_newlines=False),
                    data_text(r.endpoint, keep_newlines=False),
                    r.mode,
                    self._status(r),
                    f"{r.by_status.get('done', 0)}/{r.total}",
                    r.by_status.get("failed", 0),
                    f"{r.tokens:,}",
                    key=str(r.id),
                )
            if self.selected in ids:
                table.move_cursor(row=ids.index(self.selected))
        if self.selected not in ids and ids:
            # the selected run's own details (errors, workers, judging) are read with it: read again
            self.selected = ids[0]
            self.refresh_data()
        self._show_judging()
        self._show_live()

    def _show_judging(self) -> None:
        """The selected run's queued judges, one row each (hidden when it has none)."""
        row = next((r for r in self.rows if r.id == self.selected), None)
        judging = row.judging if row is not None else []
        box = self.query_one("#run-judging-box")
        box.display = bool(judging)
        if not judging or row is None:
            return
        self.query_one("#run-judging-title", Static).update(
            f"Queued judging of run {row.id} (judged by `chainmark worker`)"
        )
        table = self.query_one("#run-judging", DataTable)
        table.clear()
        for j in judging:
            table.add_row(
                data_text(f"{j.judge}@{j.endpoint}", keep_newlines=False),
                data_text(j.mode, keep_newlines=False),
                f"{j.judged}/{j.items}",
                j.failed,
                j.cancelled,
                j.open,
                j.running,
                j.workers,
                key=f"{j.judge}@{j.endpoint}/{j.mode}",
            )

    def _status(self, r: RunRow) -> str:
        live = self.manager.by_run_id(r.id)
        if live is not None and live.active:
            return live.state
        return r.status

    @on(DataTable.RowHighlighted, "#runs-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None and int(event.row_key.value) != self.selected:
            self.selected = int(event.row_key.value)
            self.refresh_data()

    # ------------------------------------------------------------------ live panel

    def _show_live(self) -> None:
        row = next((r for r in self.rows if r.id == self.selected), None)
        live = self.manager.by_run_id(self.selected) if self.selected is not None else None
        title = self.query_one("#run-title", Static)
        bar = self.query_one("#run-bar", ProgressBar)
        stats = self.query_one("#run-stats", Static)
        errors = self.query_one("#run-errors", Static)
        if row is None and live is None:
            title.update("no runs yet — press n to start one")
            stats.update("")
            errors.update("")
            return
        text = Text()
        text.append(f"run {self.selected}", style="bold")
        if row is not None:
            text.append(
                visible(f"  {row.name or ''} · {row.benchmark} · {row.endpoint} · {row.mode} · -j {row.concurrency}")
            )
            if row.hidden:
                text.append(f"\n{row.hidden}", style="yellow")
        state = live.state if live is not None and live.active else (row.status if row else "")
        text.append(f"\n{state}", style="yellow" if live is not None and live.active else "")
        if state == "interrupted":
            text.append(
                f" — no process is executing it; press r (or run `{RESUME_HINT.format(run_id=self.selected)}`)",
                style="yellow",
            )
        title.update(text)
        stats.update(self._stats(row, live))
        if live is not None and live.progress:
            p = live.progress
            bar.update(total=max(1, p["total"] - p["skipped"]), progress=p["done"] + p["failed"])
        elif row is not None:
            bar.update(total=max(1, row.total), progress=row.finished)
        listed = list(live.errors) if live is not None else []
        if row is not None:
            listed += [e for e in row.errors if e not in listed]
        msg = Text()
        if live is not None and live.error:
            msg.append(f"run: {visible(live.error, keep_newlines=True)}\n", style="red")
        for task_id, err in listed[-50:]:
            msg.append(f"task {task_id}: ", style="bold red")
            msg.append(clip(err, 300) + "\n")
        errors.update(msg if msg else Text("none", style="dim"))

    def _stats(self, row: RunRow | None, live: LiveRun | None) -> Text:
        out = Text()
        if live is not None and live.progress:
            p = live.progress
            # progress reports come when trajectories end; the clock runs on between them
            elapsed = max(time.monotonic() - live.started if live.active else p["elapsed"], 1e-9)
            out.append(f"done {p['done']}", style="green")
            out.append(f"  failed {p['failed']}", style="red" if p["failed"] else "")
            out.append(f"  running {p['running']}  skipped {p['skipped']}  of {p['total']}\n")
            # calls and tokens from the database: they count calls of trajectories still going
            tokens, calls = (
                (max(row.tokens, p["tokens"]), max(row.api_calls, p["api_calls"]))
                if row is not None
                else (p["tokens"], p["api_calls"])
            )
            out.append(
                f"tokens {tokens:,}  ·  model calls {calls} "
                f"({calls / elapsed:.1f}/s)  ·  {p['rate']:.2f} tasks/s  ·  {elapsed:.0f}s"
            )
        elif row is not None:
            out.append(f"done {row.by_status.get('done', 0)}", style="green")
            out.append(f"  failed {row.by_status.get('failed', 0)}", style="red" if row.by_status.get("failed") else "")
            others = {k: v for k, v in row.by_status.items() if k not in ("done", "failed")}
            if others:
                out.append("  " + "  ".join(f"{k} {v}" for k, v in sorted(others.items())))
            out.append(f"  of {row.total}\ntokens {row.tokens:,}  ·  model calls {row.api_calls}")
        if row is not None and row.live:
            out.append("\nin flight:", style="bold")
            for t in row.live[:20]:
                out.append(
                    f"\n  task {t.task_id}: {clip(t.step, 60) or 'starting'} · {t.calls} call(s) · "
                    f"{t.tokens:,} tokens · {t.seconds:.0f}s"
                )
            if len(row.live) > 20:
                out.append(f"\n  … {len(row.live) - 20} more")
        if row is not None and row.workers:
            out.append("\nworkers:", style="bold")
            for w in row.workers[:20]:
                out.append(
                    f"\n  {clip(w.host, 40)} pid {w.pid}: running {w.holding} · done {w.done} · "
                    f"failed {w.failed} · {w.calls} call(s) · {w.retries} retries"
                )
        return out

    # ------------------------------------------------------------------ actions

    def _may_run(self) -> bool:
        """Whether the person's role lets them start, resume and cancel runs; says why not when not."""
        if self.refusal is not None:
            self.notify(self.refusal, severity="warning", timeout=6)
        return self.refusal is None

    def action_launch(self) -> None:
        from tui.screens.runs.launcher import LaunchScreen

        if not self._may_run():
            return
        row = next((r for r in self.rows if r.id == self.selected), None)
        self.app.push_screen(LaunchScreen(row.benchmark if row else ""))

    def action_cancel(self) -> None:
        """Cancel the run where this session executes it, and its queued judging wherever workers
        would judge it (as ``runs cancel``): nothing more is spent on a cancelled run."""
        if self.selected is None or not self._may_run():
            return
        run_id = self.selected
        row = next((r for r in self.rows if r.id == run_id), None)
        judging = row is not None and any(j.open for j in row.judging)
        here = self.manager.cancel(run_id)
        if here:
            self.notify(f"cancelling run {run_id}: tasks in flight finish, no new ones start", timeout=4)
        if judging:
            self.save(JUDGING_CANCEL, lambda s: (run_id, *judge_queue.cancel_run(s, run_id)))
        elif not here:
            self.notify("this run is not going in this session", severity="warning")

    @on(Saved)
    def _judging_cancelled(self, message: Saved) -> None:
        if message.what != JUDGING_CANCEL:
            return
        run_id, cancelled, running = message.data
        more = f"; {running} being judged now will finish" if running else ""
        self.notify(f"run {run_id}: also cancelled {cancelled} queued judge item(s){more}", timeout=6)

    def _resume(self, retry_failed: bool) -> None:
        if self.selected is None or not self._may_run():
            return
        try:
            self.manager.resume(self.selected, retry_failed=retry_failed)
        except ValueError as exc:
            self.notify(str(exc), severity="warning")
            return
        self.notify(f"resuming run {self.selected}", timeout=3)

    def action_resume(self) -> None:
        self._resume(False)

    def action_retry_failed(self) -> None:
        self._resume(True)

    @on(DataTable.RowSelected, "#runs-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        if self.selected is None:
            return
        run_id = self.selected
        self.fetch(FirstTrajectoryLoaded, lambda s: FirstTrajectoryLoaded(first_trajectory(s, run_id)))

    @on(FirstTrajectoryLoaded)
    def _open_first(self, message: FirstTrajectoryLoaded) -> None:
        if message.trajectory_id is None:
            self.notify("this run has no trajectories yet", severity="warning")
            return
        from tui.screens.runs.trajectory import TrajectoryScreen

        self.app.push_screen(TrajectoryScreen(int(message.trajectory_id)))

    def _run_cell(self, run_id: int) -> int | str:
        return f"●{run_id}" if run_id in self.marked else run_id

    def action_mark(self) -> None:
        """Mark (or unmark) the run under the cursor for ``v`` compare."""
        if self.selected is None:
            return
        run_id = self.selected
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked.append(run_id)
        table = self.query_one("#runs-table", DataTable)
        if str(run_id) in table.rows:
            table.update_cell(str(run_id), table.ordered_columns[0].key, self._run_cell(run_id))

    def action_compare(self) -> None:
        if len(self.marked) < 2:
            self.notify("mark two or more runs with space, then press v", severity="warning")
            return
        from tui.screens.runs.compare import CompareScreen

        self.app.push_screen(CompareScreen(list(self.marked)))

    def action_back(self) -> None:
        self.app.pop_screen()
