"""Paper-style reports from scored runs: headline table, models × categories, tool adoption, histograms.

Input: the ``ScoreResult``s ``runner.score_run`` returns (one per run); output: Markdown or CSV text. Every
report states the scoring mode and embedder of each run, because both change the numbers.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the results' models (pydantic) are not needed to print them: `score` loads them when it scores
    from evaluation.scoring.results import ScoreResult


def headline_metrics(profile: str, group: list[ScoreResult]) -> list[str]:
    """The headline columns of ``profile``'s table: the metrics its benchmark plugin declares
    (``store.plugins``), in that order; a plugin that declares none, or a profile no installed
    plugin knows, shows every scalar metric its results hold rather than none. Columns no result
    has a value for are left out."""
    from store.plugins import find_plugin

    plugin = find_plugin(profile)
    declared = plugin.metrics if plugin is not None else ()
    keys = declared or tuple(
        dict.fromkeys(k for r in group for k, v in r.metrics.items() if not isinstance(v, (dict, list)))
    )
    return [k for k in keys if any(r.metrics.get(k) is not None for r in group)]


def category_metric_of(profile: str) -> str | None:
    """The metric of ``profile``'s per-category table, as its benchmark plugin names it (None: no table)."""
    from store.plugins import find_plugin

    plugin = find_plugin(profile)
    return plugin.category_metric if plugin is not None else None


def fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _label(res: ScoreResult) -> str:
    return f"{res.model or '?'} (run {res.run_id})"


def heading(benchmark: str | None, profile: str) -> str:
    """What a group's tables are titled by: the benchmark the runs are of, with the scoring profile
    when it says something more (a benchmark of your own, ``receipts-v1 (chainmark)``, or a second GTA
    benchmark); the profile alone when the benchmark is named after it or unknown."""
    if not benchmark or benchmark == profile:
        return profile
    return f"{benchmark} ({profile})"


def groups(results: list[ScoreResult]) -> list[tuple[str, str, list[ScoreResult]]]:
    """(heading, profile, results) per benchmark and profile, in the order the runs came."""
    keys = dict.fromkeys((r.benchmark, r.profile) for r in results)
    return [(heading(b, p), p, [r for r in results if (r.benchmark, r.profile) == (b, p)]) for b, p in keys]


def tables(
    results: list[ScoreResult], category_metric: str | None = None
) -> list[tuple[str, list[str], list[list[Any]]]]:
    """(title, headers, rows) for each table of the report: a set of tables per benchmark, titled by it."""
    out: list[tuple[str, list[str], list[list[Any]]]] = []
    for title, profile, group in groups(results):
        keys = headline_metrics(profile, group)
        out.append(
            (
                f"{title}: headline metrics",
                ["model", "run mode", "scoring mode", "embedder", *keys, "pending judgements"],
                [
                    [
                        _label(r),
                        r.run_mode,
                        r.mode,
                        r.embedder,
                        *[r.metrics.get(k) for k in keys],
                        r.pending_judgements,
                    ]
                    for r in group
                ],
            )
        )
        metric = category_metric or category_metric_of(profile)
        cats = list(dict.fromkeys(c for r in group for c in r.by_category))
        if metric and cats:
            label = group[0].category_label or "category"
            out.append(
                (
                    f"{title}: {metric} by {label}",
                    ["model", *cats],
                    [[_label(r), *[(r.by_category.get(c) or {}).get(metric) for c in cats]] for r in group],
                )
            )
        tools = list(dict.fromkeys(t for r in group for t in r.usage.tool_adoption))
        if tools:
            out.append(
                (
                    f"{title}: tool adoption (% of tasks using the tool at least once)",
                    ["model", *tools],
                    [[_label(r), *[r.usage.tool_adoption.get(t, 0.0) for t in tools]] for r in group],
                )
            )
        counts = sorted({int(k) for r in group for k in r.usage.calls_histogram})
        if counts:
            out.append(
                (
                    f"{title}: tool calls per task (number of tasks)",
                    ["model", *[str(c) for c in counts]],
                    [[_label(r), *[r.usage.calls_histogram.get(str(c), 0) for c in counts]] for r in group],
                )
            )
    return out


def histogram_bars(res: ScoreResult, width: int = 40) -> str:
    hist = res.usage.calls_histogram
    if not hist:
        return ""
    top = max(hist.values())
    lines = [f"{_label(res)}: tool calls per task"]
    for k in sorted(hist, key=int):
        n = hist[k]
        lines.append(f"  {int(k):>3} | {'█' * max(1, round(n / top * width)) if n else ''} {n}")
    return "\n".join(lines)


def to_markdown(
    results: list[ScoreResult],
    category_metric: str | None = None,
    extra_tables: list[tuple[str, list[str], list[list[Any]]]] | None = None,
) -> str:
    """``extra_tables`` (e.g. the run comparison) follow the per-profile tables."""
    parts = []
    for title, headers, rows in [*tables(results, category_metric), *(extra_tables or [])]:
        parts.append(f"### {title}\n")
        parts.append("| " + " | ".join(headers) + " |")
        parts.append("|" + "|".join("---" for _ in headers) + "|")
        parts.extend("| " + " | ".join(fmt(c) for c in row) + " |" for row in rows)
        parts.append("")
    bars = [histogram_bars(r) for r in results]
    if any(bars):
        parts.append("```\n" + "\n\n".join(b for b in bars if b) + "\n```")
    notes = [f"- run {r.run_id}: {n}" for r in results for n in r.notes]
    if notes:
        parts.append("\nNotes:\n" + "\n".join(notes))
    prompts = [
        f"- run {r.run_id} ({r.mode}): {judge}: {desc}" for r in results for judge, desc in r.judge_prompts.items()
    ]
    if prompts:
        parts.append("\nJudge prompts:\n" + "\n".join(prompts))
    return "\n".join(parts).rstrip() + "\n"


def csv_cell(value: Any) -> str:
    """A CSV cell for analysis tools: empty when there is no value, numbers unrounded."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 10))
    return str(value)


def to_csv(
    results: list[ScoreResult],
    category_metric: str | None = None,
    extra_tables: list[tuple[str, list[str], list[list[Any]]]] | None = None,
) -> str:
    """Every table as a block: ``# title``, header row, rows, blank line (``extra_tables`` last)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    for title, headers, rows in [*tables(results, category_metric), *(extra_tables or [])]:
        w.writerow([f"# {title}"])
        w.writerow(headers)
        for row in rows:
            w.writerow([csv_cell(c) for c in row])
        w.writerow([])
    return buf.getvalue()
