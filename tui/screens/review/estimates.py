"""Estimates panel: a run's score three ways (judge only, prediction-powered, humans only) with their
95 % intervals, per task category, and the planner's next items to label.

Computed in a worker by ``estimates_data`` (the numbers ``chainmark estimate`` prints); the screen lays
them out, with the intervals drawn as bars on one axis so their widths compare at a glance.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Static
from tui.widgets.header import Header

from tui.messages import Result
from tui.safe_text import data_cells
from tui.screens.base import WorkScreen
from tui.screens.review.estimates_data import EstimatesData, EstimatesQuery, estimates_data
from tui.widgets.footer import KeyFooter

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")
ROWS = (("judge_only", "judge only"), ("ppi++", "PPI++"), ("ppi", "PPI"), ("human_only", "humans only"))
BAR_WIDTH = 20


@dataclass
class EstimatesLoaded(Result):
    WHAT: ClassVar[str] = "estimates"
    data: EstimatesData


def interval_bar(ci: list[float] | None, low: float, high: float, width: int = BAR_WIDTH) -> str:
    """An interval as a bar on the axis ``low``..``high`` (``width`` cells): dots outside, ━ inside."""
    if ci is None or high <= low:
        return " " * width
    a = round((ci[0] - low) / (high - low) * (width - 1))
    b = round((ci[1] - low) / (high - low) * (width - 1))
    a, b = max(0, min(a, width - 1)), max(0, min(b, width - 1))
    return "·" * a + "━" * (b - a + 1) + "·" * (width - 1 - b)


def _axis(blocks: list[dict[str, Any]]) -> tuple[float, float]:
    ends = [x for b in blocks for m, _ in ROWS if b[m]["ci"] for x in b[m]["ci"]]
    return (min(ends), max(ends)) if ends else (0.0, 1.0)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


class EstimatesScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("r", "refresh", "Refresh", id="estimates.refresh"),
        Binding("slash", "focus_run", "Run/judge", id="estimates.focus_run"),
        Binding("escape", "back", "Back", id="estimates.back"),
    ]

    def __init__(self, run_id: int | None = None, judge: str = "", scale: str = "") -> None:
        super().__init__()
        self.query_state = EstimatesQuery(run_id, judge, scale)
        self.data: EstimatesData | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="est-controls"):
            run = "" if self.query_state.run_id is None else str(self.query_state.run_id)
            yield Input(run, placeholder="run id (newest)", id="est-run")
            yield Input(self.query_state.judge, placeholder="judge (first rated)", id="est-judge")
            yield Input(self.query_state.scale, placeholder="scale (judge's own)", id="est-scale")
        yield Static("", id="est-title")
        with Horizontal(id="est-body"):
            with Vertical(id="est-left"):
                yield DataTable(id="est-intervals", cursor_type="row")
                yield Static("", id="est-gain")
            with Vertical(id="est-right"):
                yield Static("", id="est-next-title")
                yield DataTable(id="est-next", cursor_type="row")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#est-intervals", DataTable)
        for label, width in (
            ("scope", 8),
            ("method", 11),
            ("est.", 5),
            ("95% CI", 14),
            ("n", 3),
            ("interval", BAR_WIDTH),
        ):
            table.add_column(label, width=width)
        nxt = self.query_one("#est-next", DataTable)
        for label, width in (("target", 22), ("category", 9), ("doubt", 5)):
            nxt.add_column(label, width=width)
        table.focus()

    def refresh_data(self) -> None:
        q, viewer = self.query_state, self.cm.actor
        self.query_one("#est-title", Static).update("computing estimates…")
        self.fetch(EstimatesLoaded, lambda s: EstimatesLoaded(estimates_data(s, q, viewer)))

    def action_refresh(self) -> None:
        self.refresh_data()

    @on(EstimatesLoaded)
    def loaded(self, message: EstimatesLoaded) -> None:
        if message.data.query == self.query_state:
            self.show(message.data)

    def show(self, data: EstimatesData) -> None:
        self.data = data
        table = self.query_one("#est-intervals", DataTable)
        nxt = self.query_one("#est-next", DataTable)
        table.clear()
        nxt.clear()
        title = self.query_one("#est-title", Static)
        if data.message is not None or not data.reports:
            title.update(data_cells(data.message or "nothing to estimate")[0])
            self.query_one("#est-gain", Static).update("")
            return
        report = data.reports[0]
        name = report["scale"] + (f".{report['dimension']}" if report["dimension"] else "")
        title.update(
            data_cells(
                f"run {report['run']} · judge {report['judge']} · {name} ({report['kind']}) · "
                f"{report['items']} item(s), {report['labelled']} with a human label"
            )[0]
        )
        blocks = [("all", report["overall"])] + [(c, b) for c, b in report["by_category"].items()]
        low, high = _axis([b for _, b in blocks])
        for scope, block in blocks:
            for key, label in ROWS:
                d = block[key]
                ci = "–" if d["ci"] is None else f"[{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]"
                table.add_row(
                    *data_cells(scope, label, _num(d["estimate"]), ci, d["n_labelled"]),
                    interval_bar(d["ci"], low, high),
                    key=f"{scope}|{key}",
                )
        gained = report["overall"]["width_gained"]
        self.query_one("#est-gain", Static).update(
            f"axis {low:.3f} … {high:.3f}   ·   "
            + ("width gained: –" if gained is None else f"PPI++ is {gained * 100:.1f}% narrower than humans alone")
        )
        plan = data.plan or {"items": []}
        self.query_one("#est-next-title", Static).update(f"[b]Label next[/b] ({len(plan['items'])} item(s))")
        for p in plan["items"]:
            nxt.add_row(*data_cells(p["label"], p["category"], f"{p['doubt']:.2f}"), key=p["label"])

    def action_focus_run(self) -> None:
        self.query_one("#est-run", Input).focus()

    @on(Input.Submitted)
    def _query_changed(self, event: Input.Submitted) -> None:
        run = self.query_one("#est-run", Input).value.strip()
        if run and not run.isdigit():
            self.notify("the run is a number", severity="warning")
            return
        self.query_state = EstimatesQuery(
            int(run) if run else None,
            self.query_one("#est-judge", Input).value.strip(),
            self.query_one("#est-scale", Input).value.strip(),
        )
        self.query_one("#est-intervals", DataTable).focus()
        self.refresh_data()

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#est-intervals", DataTable).focus()
        else:
            self.app.pop_screen()
