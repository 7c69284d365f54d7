"""Reports: paper-style tables for one or more runs, exported to Markdown, CSV or HTML from the screen.

The tables are ``evaluation.scoring.report``'s, computed in a worker by scoring the chosen runs
without writing (as ``chainmark report`` does), so an export equals the CLI's output.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from evaluation.scoring.results import ScoreResult

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Input, Static
from tui.widgets.header import Header

from evaluation.scoring import report as reports
from evaluation.scoring.runner import score_run
from tui.messages import Failed, Result, Saved
from tui.safe_text import data_cells
from tui.screens.base import WorkScreen
from tui.screens.runs.data import RunRow, run_rows
from tui.widgets.footer import KeyFooter

CSS = str(Path(__file__).resolve().parent.parent / "review.tcss")
MODES = ("faithful", "fixed")


@dataclass(frozen=True)
class ReportRequest:
    run_ids: tuple[int, ...]
    mode: str
    embedder: str
    metric: str | None


def build_report(engine: Any, req: ReportRequest) -> list[ScoreResult]:
    """Score each run without writing, exactly like ``chainmark report``."""
    return [score_run(engine, r, mode=req.mode, embedder=req.embedder, write=False) for r in req.run_ids]


Tables = list[tuple[str, list[str], list[list[Any]]]]


def preference_tables(session: Any, req: ReportRequest) -> Tables:
    """The Bradley–Terry leaderboard of people's preferences between the chosen runs (as the CLI report)."""
    if len(set(req.run_ids)) < 2:
        return []
    from evaluation.agreement.preferences import leaderboard_tables

    return leaderboard_tables(session, list(dict.fromkeys(req.run_ids)))


def report_renderable(
    results: list[ScoreResult], metric: str | None, extra: Tables | None = None, notes: list[str] | None = None
) -> Group:
    parts: list[Any] = [Text(n, style="yellow") for n in notes or []]
    for title, headers, rows in [*reports.tables(results, metric), *(extra or [])]:
        t = Table(
            title=title, title_justify="left", title_style="bold", show_lines=False, expand=False, box=box.SIMPLE_HEAD
        )
        for i, h in enumerate(headers):
            t.add_column(h, justify="left" if i == 0 else "right", min_width=16 if i == 0 else min(len(h), 10))
        for row in rows:
            t.add_row(*(reports.fmt(c) for c in row))
        parts += [t, Text("")]
    bars = [reports.histogram_bars(r) for r in results]
    if any(bars):
        parts.append(Text("\n\n".join(b for b in bars if b)))
    notes = [f"run {r.run_id}: {n}" for r in results for n in r.notes]
    if notes:
        parts.append(Text("\n".join(notes), style="dim"))
    return Group(*parts)


def export_text(results: list[ScoreResult], metric: str | None, path: Path, extra: Tables | None = None) -> str:
    """Markdown for .md (anything but .csv), CSV for .csv, HTML for .html."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        from evaluation.scoring.html_report import to_html

        return to_html(results, metric, extra)
    return reports.to_csv(results, metric, extra) if suffix == ".csv" else reports.to_markdown(results, metric, extra)


@dataclass
class ReportRunsLoaded(Result):
    """The runs to choose from."""

    WHAT: ClassVar[str] = "runs"
    runs: list[RunRow]


@dataclass
class ReportBuilt(Result):
    """The scored report for a request, and the extra tables (preferences) shown under it."""

    WHAT: ClassVar[str] = "report"
    request: ReportRequest
    results: list[ScoreResult]
    extra: Any
    notes: list[str] = field(default_factory=list)  # blind mode: what was left out and why


def build_for(session: Any, engine: Any, req: ReportRequest, viewer: str | None) -> ReportBuilt:
    """The report ``viewer`` may see: runs they still owe blind work on are left out whole, and the
    preference leaderboard while they have pairs to judge (``BlindScope``, as ``chainmark report``)."""
    from annotation.review.blind import blind_scope
    from tui.blind_view import visible_report_runs

    scope = blind_scope(session, viewer)
    shown, left_out = visible_report_runs(scope, list(req.run_ids))
    visible = replace(req, run_ids=tuple(shown))
    notes = [n for n in (left_out, scope.leaderboard_note()) if n]
    extra = [] if scope.leaderboard_note() else preference_tables(session, visible)
    return ReportBuilt(req, build_report(engine, visible), extra, notes)


class ReportsScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("space", "toggle_run", "Select run", id="reports.toggle_run"),
        Binding("g", "generate", "Build report", id="reports.generate"),
        Binding("m", "toggle_mode", "faithful/fixed", id="reports.toggle_mode"),
        Binding("e", "export", "Export md/csv/html", id="reports.export"),
        Binding("escape", "back", "Back", id="reports.back"),
    ]

    def __init__(self, run_ids: tuple[int, ...] = (), embedder: str = "minilm") -> None:
        super().__init__()
        self.chosen: list[int] = list(run_ids)
        self.mode = "faithful"
        self.embedder = embedder
        self.metric: str | None = None
        self.runs: list[RunRow] = []
        self.results: list[ScoreResult] | None = None
        self.extra: Tables = []
        self.shown_request: ReportRequest | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="report-status")
        with Horizontal(id="report-body"):
            yield DataTable(id="report-runs", cursor_type="row")
            with VerticalScroll(id="report-scroll"):
                yield Static("select runs with space, then g builds the report", id="report-view")
        yield Input(placeholder="export to …/report.md, .csv or .html; enter writes", id="export-path")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#report-runs", DataTable)
        for label, width in (("", 1), ("run", 4), ("name", 12), ("benchmark", 10), ("status", 9)):  # "cancelled"
            table.add_column(label, width=width)
        table.focus()
        self.query_one("#export-path", Input).display = False
        if self.chosen:
            self.action_generate()

    def refresh_data(self) -> None:
        viewer = self.cm.actor
        self.fetch(ReportRunsLoaded, lambda s: ReportRunsLoaded(run_rows(s, viewer=viewer)))

    def _request(self) -> ReportRequest:
        return ReportRequest(tuple(self.chosen), self.mode, self.embedder, self.metric)

    def _status(self) -> None:
        text = Text()
        text.append("runs " + (", ".join(map(str, self.chosen)) or "none chosen"), style="bold")
        text.append(f"  ·  scoring {self.mode}  ·  embedder {self.embedder}")
        if self.results is not None and self.shown_request != self._request():
            text.append("  ·  press g to rebuild", style="yellow")
        self.query_one("#report-status", Static).update(text)

    @on(ReportRunsLoaded)
    def _runs_loaded(self, message: ReportRunsLoaded) -> None:
        self.runs = message.runs
        table = self.query_one("#report-runs", DataTable)
        cursor = table.cursor_row
        table.clear()
        for r in self.runs:
            table.add_row(
                "✓" if r.id in self.chosen else "", r.id, *data_cells(r.name, r.benchmark, r.status), key=str(r.id)
            )
        if self.runs:
            table.move_cursor(row=min(cursor, len(self.runs) - 1))
        self._status()

    @on(ReportBuilt)
    def _report_built(self, message: ReportBuilt) -> None:
        req, results, extra = message.request, message.results, message.extra
        if req != self._request():
            return
        self.results, self.extra, self.shown_request = results, extra, req
        self.query_one("#report-view", Static).update(report_renderable(results, req.metric, extra, message.notes))
        self._status()

    def action_toggle_run(self) -> None:
        table = self.query_one("#report-runs", DataTable)
        if not self.runs:
            return
        run_id = self.runs[table.cursor_row].id
        if run_id in self.chosen:
            self.chosen.remove(run_id)
        else:
            self.chosen.append(run_id)
        table.update_cell(str(run_id), table.ordered_columns[0].key, "✓" if run_id in self.chosen else "")
        self._status()

    def action_toggle_mode(self) -> None:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        self._status()

    def action_generate(self) -> None:
        if not self.chosen:
            self.notify("select one or more runs with space first", severity="warning")
            return
        req, engine = self._request(), self.cm.engine
        self.query_one("#report-view", Static).update("scoring…")
        viewer = self.cm.actor
        self.fetch(ReportBuilt, lambda s: build_for(s, engine(), req, viewer))

    def action_export(self) -> None:
        if self.results is None:
            self.notify("build the report first (g)", severity="warning")
            return
        box = self.query_one("#export-path", Input)
        box.value = (
            box.value
            or f"report-runs-{'-'.join(map(str, self.shown_request.run_ids if self.shown_request else ()))}.md"
        )
        box.display = True
        box.focus()

    @on(Input.Submitted, "#export-path")
    def _export(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        results, metric, extra = self.results, self.shown_request.metric if self.shown_request else None, self.extra
        self.query_one("#export-path", Input).display = False
        self.query_one("#report-runs", DataTable).focus()
        if results is None or not event.value.strip():
            return

        def write() -> None:
            try:
                path.write_text(export_text(results, metric, path, extra), encoding="utf-8")
            except OSError as exc:
                self.post_message(Failed("export", f"{path}: {exc.strerror or exc}"))
                return
            self.post_message(Saved("export", str(path)))

        self.run_past_leaving(write, "export report")

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        if message.what == "export":
            self.notify(f"wrote {message.data}", timeout=4)

    def action_back(self) -> None:
        box = self.query_one("#export-path", Input)
        if box.display:
            box.display = False
            self.query_one("#report-runs", DataTable).focus()
        else:
            self.app.pop_screen()
