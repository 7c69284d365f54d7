"""A report people can share: one self-contained HTML file, the same tables as the Markdown report plus
plots (per-category bars, tool adoption, tool calls per task) drawn with matplotlib as inline SVG.

Nothing is fetched when the file opens: styles are inline and every plot is a ``data:`` image. All text
comes from data (model and run names, categories, notes, which other harnesses and users wrote) and is
escaped; plots are embedded as images, where a browser runs no script.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from evaluation.scoring.results import ScoreResult

from evaluation.scoring.report import _label, fmt, tables

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; } td.missing { color: #999; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: .9em; }
.notes li { margin: .2em 0; }
"""


_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0, 9), 11, 12, *range(14, 32), 127]}


def _e(value: Any) -> str:
    """Text from data as HTML text: markup escaped, and control characters (which a terminal printing
    the file would act on, and HTML does not allow) shown as escapes."""
    return html.escape(str(value).translate(_CONTROLS), quote=True)


def _table(title: str, headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join('<td class="missing">–</td>' if c is None else f"<td>{_e(fmt(c))}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return f"<h2>{_e(title)}</h2>\n<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(width: float, height: float) -> Any:
    """A matplotlib figure of its own, drawn without pyplot: pyplot keeps a process-wide list of open
    figures and switches the process's backend, neither safe when the TUI builds a report in a worker
    thread."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _svg(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="" src="data:image/svg+xml;base64,{data}">'


def _bars(title: str, series: dict[str, dict[str, float]], ylabel: str) -> str:
    """Grouped bars: one group per x label, one bar per series (model)."""
    labels = list(dict.fromkeys(x for values in series.values() for x in values))
    if not labels:
        return ""
    fig = figure(max(5.0, 0.6 * len(labels) * max(1, len(series))), 3.2)
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        xs = [j + i * width for j in range(len(labels))]
        ax.bar(xs, [values.get(x) or 0.0 for x in labels], width, label=name)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(labels))])
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return f"<figure>{_svg(fig)}<figcaption>{_e(title)}</figcaption></figure>"


def _plots(results: list[ScoreResult], category_metric: str | None) -> list[str]:
    from evaluation.scoring.report import category_metric_of, groups

    figures = []
    for title, profile, group in groups(results):
        metric = category_metric or category_metric_of(profile)
        if metric:
            series = {
                _label(r): {
                    c: float(v[metric]) for c, v in r.by_category.items() if isinstance(v.get(metric), (int, float))
                }
                for r in group
            }
            if any(series.values()):
                figures.append(_bars(f"{title}: {metric} by category", series, metric))
        adoption = {_label(r): dict(r.usage.tool_adoption) for r in group}
        if any(adoption.values()):
            figures.append(_bars(f"{title}: tool adoption (% of tasks)", adoption, "% of tasks"))
        calls = {
            _label(r): {k: float(v) for k, v in sorted(r.usage.calls_histogram.items(), key=lambda kv: int(kv[0]))}
            for r in group
        }
        if any(calls.values()):
            figures.append(_bars(f"{title}: tool calls per task", calls, "tasks"))
    return [f for f in figures if f]


def report_title(results: list[ScoreResult]) -> str:
    """The page's title: the benchmarks the runs are of (what a reader looks for first), then the runs."""
    from evaluation.scoring.report import groups

    benchmarks = ", ".join(dict.fromkeys(title for title, _, _ in groups(results)))
    runs = ", ".join(str(r.run_id) for r in results)
    return f"chainmark report: {benchmarks} · runs {runs}" if benchmarks else "chainmark report"


def to_html(
    results: list[ScoreResult],
    category_metric: str | None = None,
    extra_tables: list[tuple[str, list[str], list[list[Any]]]] | None = None,
    title: str | None = None,
    more: list[str] | None = None,
    notes: list[str] | None = None,
) -> str:
    """The whole report as one HTML document (tables, plots, notes and judge prompts); ``more`` are
    finished HTML sections placed after the plots (agreement on the runs' targets); ``notes`` are lines
    under the title (what was left out of the report and why); ``title`` defaults to ``report_title``."""
    title = title or report_title(results)
    parts = [
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>',
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        "<p>"
        + _e(
            "; ".join(
                f"{_label(r)}: {r.benchmark} · run mode {r.run_mode or '?'} · "
                f"scoring mode {r.mode} · embedder {r.embedder or 'none'}"
                for r in results
            )
        )
        + "</p>",
        *(f'<p class="notes">{_e(n)}</p>' for n in notes or []),
    ]
    for title_, headers, rows in [*tables(results, category_metric), *(extra_tables or [])]:
        parts.append(_table(title_, headers, rows))
    parts.extend(_plots(results, category_metric))
    parts.extend(more or [])
    notes = [f"run {r.run_id}: {n}" for r in results for n in r.notes]
    prompts = [
        f"run {r.run_id} ({r.mode}): {judge}: {desc}" for r in results for judge, desc in r.judge_prompts.items()
    ]
    for heading, items in (("Notes", notes), ("Judge prompts", prompts)):
        if items:
            parts.append(
                f'<h2>{heading}</h2><ul class="notes">' + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)
