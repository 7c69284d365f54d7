"""Agreement dashboard: the statistics table with CIs, confusion matrices and terminal plots.

Everything is computed in a worker by ``dashboard_data`` (the same report ``chainmark agreement``
prints); the screen only lays it out. Plots use textual-plotext so they work over SSH and in tmux.
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
from textual_plotext import PlotextPlot

from tui.messages import Result
from tui.safe_text import data_cells
from tui.screens.base import WorkScreen
from tui.screens.review.dashboard_data import DashboardData, DashboardQuery, dashboard_data
from tui.widgets.footer import KeyFooter
from tui.widgets.review.confusion import ConfusionMatrix
from tui.stat_text import est_text
from tui.widgets.review.event_text import value_text

CSS = str(Path(__file__).resolve().parents[2] / "review.tcss")

PAIR_COLUMNS = ("percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "pearson", "spearman", "mae")


@dataclass
class DashboardLoaded(Result):
    """Agreement for the dashboard's query (scale, raters, …)."""

    WHAT: ClassVar[str] = "agreement"
    data: DashboardData


class DashboardScreen(WorkScreen):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("s", "next_scale", "Next scale", id="dashboard.next_scale"),
        Binding("d", "next_dimension", "Next dimension", id="dashboard.next_dimension"),
        Binding("p", "next_pair", "Next pair", id="dashboard.next_pair"),
        Binding("slash", "focus_raters", "Raters", id="dashboard.focus_raters"),
        Binding("r", "refresh", "Refresh", id="dashboard.refresh"),
        Binding("e", "estimates", "Estimates", id="dashboard.estimates"),
        Binding("escape", "back", "Back", id="dashboard.back"),
    ]

    def __init__(
        self, scale: str = "", raters: tuple[str, ...] = (), target_kind: str = "", resamples: int | None = None
    ) -> None:
        super().__init__()
        self.query_state = DashboardQuery(
            scale=scale,
            raters=raters,
            target_kind=target_kind,
            **({"resamples": resamples} if resamples is not None else {}),
        )
        self.data: DashboardData | None = None
        self.pair = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="dash-controls"):
            yield Input(
                ", ".join(self.query_state.raters), placeholder="raters: all (or e.g. ann, judge-a)", id="dash-raters"
            )
        yield Static("", id="dash-title")
        with Horizontal(id="dash-body"):
            with Vertical(id="dash-left"):
                yield DataTable(id="dash-overall", cursor_type="none")
                yield DataTable(id="dash-pairs", cursor_type="row")
                yield Static("", id="dash-notes")
                yield Static("", id="dash-board-title")
                yield DataTable(id="dash-leaderboard", cursor_type="none")
            with Vertical(id="dash-right"):
                yield ConfusionMatrix(id="dash-confusion")
                yield PlotextPlot(id="dash-distribution")
                yield PlotextPlot(id="dash-categories")
        yield KeyFooter()

    def on_mount(self) -> None:
        overall = self.query_one("#dash-overall", DataTable)
        for label, width in (("statistic", 28), ("value [95% CI]", 22), ("n", 4), ("note", 40)):
            overall.add_column(label, width=width)
        board = self.query_one("#dash-leaderboard", DataTable)
        for label, width in (
            ("#", 3),
            ("model", 24),
            ("score", 7),
            ("95% CI", 13),
            ("n", 5),
            ("W-T-L", 11),
            ("win rate", 8),
        ):
            board.add_column(label, width=width)
        board.display = False
        self.query_one("#dash-board-title", Static).display = False
        self.query_one("#dash-pairs", DataTable).focus()

    def refresh_data(self) -> None:
        q = self.query_state
        self.query_one("#dash-title", Static).update("computing agreement…")
        viewer = self.cm.actor
        self.fetch(DashboardLoaded, lambda s: DashboardLoaded(dashboard_data(s, q, viewer)))

    def action_refresh(self) -> None:
        self.refresh_data()

    @on(DashboardLoaded)
    def loaded(self, message: DashboardLoaded) -> None:
        if message.data.query == self.query_state:
            self.show(message.data)

    # ------------------------------------------------------------------ rendering

    def show(self, data: DashboardData) -> None:
        self.data = data
        title = self.query_one("#dash-title", Static)
        overall = self.query_one("#dash-overall", DataTable)
        pairs = self.query_one("#dash-pairs", DataTable)
        overall.clear()
        pairs.clear(columns=True)
        self._show_leaderboard(data)
        report = data.report
        if report is None:
            title.update("no ratings or verdicts to compare yet")
            self.query_one("#dash-notes", Static).update("")
            self.query_one(ConfusionMatrix).clear()
            return
        dim = f".{report['dimension']}" if report["dimension"] else ""
        which = (
            f"  (matrix {data.query.matrix_index % len(data.titles) + 1}/{len(data.titles)})"
            if len(data.titles) > 1
            else ""
        )
        name, rest = data_cells(
            f"{report['scale']}{dim}",
            f"({report['level']}): {len(report['raters'])} rater(s), "
            f"{report['units']} target(s){which}   ·   scales: {', '.join(data.scales)}",
        )
        title.update(f"[b]{name}[/b] {rest}")
        for name, est in report["overall"].items():
            overall.add_row(*data_cells(name, est_text(est), est["n"], est["reason"] or ""), key=name)
        cols = [c for c in PAIR_COLUMNS if any(c in p["statistics"] for p in report["pairs"])]
        for label, width in (("rater A", 16), ("rater B", 16), ("pair", 11), ("n", 3)):
            pairs.add_column(label, width=width)
        for c in cols:
            pairs.add_column(
                c.replace("_", " ").replace("cohen kappa", "κ").replace("percent agreement", "% agree"), width=22, key=c
            )
        for p in report["pairs"]:
            pairs.add_row(
                *data_cells(p["a"], p["b"], p["kind"], p["n"], *(est_text(p["statistics"].get(c)) for c in cols)),
                key=f"{p['a']}|{p['b']}",
            )
        self.query_one("#dash-notes", Static).update(self._notes(report))
        self._show_confusion()
        self._plot(data)

    def _show_leaderboard(self, data: DashboardData) -> None:
        """People's pairwise preferences as a Bradley–Terry leaderboard (shown only when there are any)."""
        title = self.query_one("#dash-board-title", Static)
        table = self.query_one("#dash-leaderboard", DataTable)
        table.clear()
        board = data.leaderboard
        title.display = bool(board or data.leaderboard_note)
        table.display = bool(board)
        if not board:
            title.update(data_cells(data.leaderboard_note)[0] if data.leaderboard_note else "")
            return
        title.update(
            f"[b]Human preferences[/b]: Bradley–Terry leaderboard, {board['judgements']} judgement(s), "
            f"ties count half, 95% bootstrap CI"
        )
        for i, m in enumerate(board["models"]):
            ci = "–" if m["ci"] is None else f"{m['ci'][0]:.0f}–{m['ci'][1]:.0f}"
            rate = "–" if m["win_rate"] is None else f"{m['win_rate']:.2f}"
            table.add_row(
                *data_cells(
                    i + 1,
                    m["model"],
                    f"{m['score']:.0f}",
                    ci,
                    m["comparisons"],
                    f"{m['wins']}-{m['ties']}-{m['losses']}",
                    rate,
                ),
                key=m["model"],
            )

    def _notes(self, report: dict[str, Any]) -> str:
        lines = []
        je = report.get("judge_errors")
        if je:
            mean = "–" if je["mean_offdiagonal"] is None else f"{je['mean_offdiagonal']:.3f}"
            eff = "–" if je["effective_judges"] is None else f"{je['effective_judges']:.2f}"
            lines.append(
                f"judge error correlation vs {je['reference']} (n={je['n_units']}): mean r {mean}, "
                f"effective independent judges {eff}" + (f" — {je['reason']}" if je["reason"] else "")
            )
        mr = report.get("model_ranking")
        if mr and mr.get("reason"):
            lines.append(f"model ranking: {mr['reason']}")
        lines += [f"note: {n}" for n in report["notes"]]
        return "\n".join(lines)

    def _show_confusion(self) -> None:
        widget = self.query_one(ConfusionMatrix)
        data = self.data
        if data is None or not data.confusions:
            widget.clear("no rater pair shares a target")
            return
        c = data.confusions[self.pair % len(data.confusions)]
        widget.show(c.a, c.b, c.categories, c.counts)

    def _plot(self, data: DashboardData) -> None:
        dist = self.query_one("#dash-distribution", PlotextPlot)
        plt = dist.plt
        plt.clear_data()
        plt.clear_figure()
        labels = [value_text(c)[:8] for c in data.categories]
        if data.distribution and labels:
            raters = list(data.distribution)
            plt.multiple_bar(labels, [data.distribution[r] for r in raters], labels=raters)
        plt.title("score distribution per rater")
        dist.refresh()
        cats = self.query_one("#dash-categories", PlotextPlot)
        plt = cats.plt
        plt.clear_data()
        plt.clear_figure()
        defined = [(c, v) for c, v, _ in data.per_category if v is not None]
        if defined:
            plt.bar([c[:12] for c, _ in defined], [round(v, 3) for _, v in defined])
            plt.ylim(0, 1)
        plt.title("percent agreement per task category")
        cats.refresh()

    # ------------------------------------------------------------------ actions

    def _requery(self, **changes: Any) -> None:
        self.query_state = DashboardQuery(**{**self.query_state.__dict__, **changes})
        self.refresh_data()

    def action_next_scale(self) -> None:
        if self.data and self.data.scales:
            names = self.data.scales
            current = names.index(self.data.scale) if self.data.scale in names else -1
            self.pair = 0
            self._requery(scale=names[(current + 1) % len(names)], matrix_index=0)

    def action_next_dimension(self) -> None:
        if self.data and len(self.data.titles) > 1:
            self._requery(
                scale=self.data.scale, matrix_index=(self.query_state.matrix_index + 1) % len(self.data.titles)
            )

    def action_next_pair(self) -> None:
        self.pair += 1
        self._show_confusion()

    @on(DataTable.RowHighlighted, "#dash-pairs")
    def _pair_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.data is None or event.row_key is None or event.row_key.value is None:  # an emptied table says -1
            return
        a, _, b = str(event.row_key.value).partition("|")
        for i, c in enumerate(self.data.confusions):
            if (c.a, c.b) == (a, b):
                self.pair = i
                self._show_confusion()

    def action_estimates(self) -> None:
        """The newest run's score from a judge and people's labels on this scale (the estimates panel)."""
        from tui.screens.review.estimates import EstimatesScreen

        self.app.push_screen(EstimatesScreen(scale=self.data.scale if self.data else ""))

    def action_focus_raters(self) -> None:
        self.query_one("#dash-raters", Input).focus()

    @on(Input.Submitted, "#dash-raters")
    def _raters_changed(self, event: Input.Submitted) -> None:
        raters = tuple(r.strip() for r in event.value.split(",") if r.strip())
        self.query_one("#dash-pairs", DataTable).focus()
        self._requery(raters=raters)

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#dash-pairs", DataTable).focus()
        else:
            self.app.pop_screen()
