"""The estimates in an HTML report: per judge and scale, a table of the three estimates and an interval
plot (judge only, prediction-powered, humans only; overall and per category) drawn as inline SVG, so
the page needs nothing fetched and no script. Built from ``EstimateReport.to_dict`` (what
``chainmark estimate --json`` prints); every text from data is escaped."""

from __future__ import annotations

from typing import Any

from evaluation.scoring.html_report import _e, _table

PLOTTED = (
    ("judge_only", "judge only", "#c0392b"),
    ("ppi++", "PPI++", "#1f6fb2"),
    ("human_only", "humans only", "#555"),
)
ROW_HEIGHT, LABEL_WIDTH, PLOT_WIDTH, MARGIN = 18, 190, 420, 24


def _x(value: float, low: float, high: float) -> float:
    return LABEL_WIDTH + (value - low) / ((high - low) or 1.0) * PLOT_WIDTH


def _rows(report: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(scope, method title, colour, interval) for every defined interval, overall first."""
    blocks = [("all items", report["overall"])] + list(report["by_category"].items())
    return [
        (scope, title, colour, block[key])
        for scope, block in blocks
        for key, title, colour in PLOTTED
        if block[key]["ci"] is not None
    ]


def interval_svg(report: dict[str, Any]) -> str:
    """One horizontal interval per method and scope on a shared axis, a dot at each estimate."""
    rows = _rows(report)
    if not rows:
        return ""
    ends = [x for *_, d in rows for x in d["ci"]]
    low, high = min(ends), max(ends)
    height = MARGIN * 2 + ROW_HEIGHT * len(rows)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{LABEL_WIDTH + PLOT_WIDTH + 40}" '
        f'height="{height}" font-family="system-ui, sans-serif" font-size="11">',
        f"<title>{_e(report['judge'])}: 95% intervals</title>",
    ]
    for tick in range(5):
        value = low + (high - low) * tick / 4
        x = _x(value, low, high)
        parts.append(
            f'<line x1="{x:.1f}" y1="{MARGIN - 6}" x2="{x:.1f}" y2="{height - MARGIN + 4}" stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle">{value:.3f}</text>'
        )
    for i, (scope, title, colour, d) in enumerate(rows):
        y = MARGIN + ROW_HEIGHT * i + ROW_HEIGHT / 2
        a, b, m = (_x(v, low, high) for v in (d["ci"][0], d["ci"][1], d["estimate"]))
        parts.append(
            f'<g class="interval" data-method="{_e(d["method"])}" data-scope="{_e(scope)}">'
            f'<text x="4" y="{y + 4:.1f}">{_e(scope)} · {_e(title)}</text>'
            f'<line x1="{a:.1f}" y1="{y:.1f}" x2="{b:.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="3"/>'
            f'<circle cx="{m:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def estimate_section(report: dict[str, Any]) -> str:
    """A heading, the table of estimates (overall and per category) and the interval plot."""
    name = report["scale"] + (f".{report['dimension']}" if report["dimension"] else "")
    table_rows = []
    for scope, block in [("all items", report["overall"]), *report["by_category"].items()]:
        for key, title, _ in PLOTTED:
            d = block[key]
            ci = None if d["ci"] is None else f"[{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]"
            table_rows.append([scope, title, d["estimate"], ci, d["width"], d["n_labelled"]])
    title = f"Estimates: run {report['run']}, judge {report['judge']} on {name} ({report['labelled']} of {report['items']} items with a human label)"
    gained = report["overall"]["width_gained"]
    caption = (
        "95% intervals; PPI++ is the prediction-powered estimate (judge on every item, corrected by the human labels)"
        + ("" if gained is None else f"; it is {gained * 100:.1f}% narrower than humans alone")
    )
    svg = interval_svg(report)
    figure = f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>" if svg else ""
    return _table(title, ["scope", "method", "estimate", "95% CI", "width", "human labels"], table_rows) + figure
