"""Agreement as a page people can share: per scale, the overall statistics, a heatmap of pairwise
agreement between every two raters (people and judges) with the values written in the cells, and the
inter-judge rank correlation when judges ranked models. Built from the same report dictionaries the
CLI prints (``summary.AgreementReport.to_dict``), drawn with matplotlib as inline SVG."""

from __future__ import annotations

from typing import Any

from evaluation.scoring.html_report import STYLE, _e, _svg, _table, figure

# The pairwise statistic a heatmap shows, by the scale's level (the first one every pair has).
HEATMAP_STATISTICS = {
    "nominal": ("cohen_kappa", "percent_agreement"),
    "ordinal": ("cohen_kappa_quadratic", "cohen_kappa", "percent_agreement"),
    "interval": ("pearson", "cohen_kappa_quadratic", "percent_agreement"),
}


def _value(estimate: dict[str, Any] | None) -> float | None:
    value = (estimate or {}).get("value")
    return float(value) if isinstance(value, (int, float)) else None


def _estimate_text(estimate: dict[str, Any] | None) -> str | None:
    if not estimate or _value(estimate) is None:
        return None
    ci = estimate.get("ci")
    return f"{_value(estimate):.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def pair_matrix(data: dict[str, Any]) -> tuple[str, list[str], list[list[float | None]]] | None:
    """(statistic, raters, square matrix) of the pairwise statistic for this scale; None without pairs."""
    pairs = data.get("pairs") or []
    if not pairs:
        return None
    for statistic in HEATMAP_STATISTICS.get(data.get("level") or "nominal", ("percent_agreement",)):
        if any(_value(p["statistics"].get(statistic)) is not None for p in pairs):
            break
    else:
        return None
    raters = list(data.get("raters") or sorted({r for p in pairs for r in (p["a"], p["b"])}))
    at = {r: i for i, r in enumerate(raters)}
    grid: list[list[float | None]] = [[1.0 if i == j else None for j in range(len(raters))] for i in range(len(raters))]
    for p in pairs:
        if p["a"] in at and p["b"] in at:
            grid[at[p["a"]]][at[p["b"]]] = grid[at[p["b"]]][at[p["a"]]] = _value(p["statistics"].get(statistic))
    return statistic, raters, grid


def heatmap(title: str, labels: list[str], grid: list[list[float | None]], *, low: float = -1.0) -> str:
    """A labelled heatmap with each cell's value written in it; empty cells (no shared targets) grey."""
    import matplotlib
    import numpy as np

    values = np.array([[np.nan if v is None else v for v in row] for row in grid], dtype=float)
    size = max(3.5, 0.75 * len(labels) + 1.5)
    fig = figure(size + 1.0, size)
    ax = fig.subplots()
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=low, vmax=1.0)
    ax.set_xticks(range(len(labels)), labels=labels, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), labels=labels, fontsize=8)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, "–" if v is None else f"{v:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(title, fontsize=10)
    return f"<figure>{_svg(fig)}<figcaption>{_e(title)}</figcaption></figure>"


def sections(results: list[dict[str, Any]]) -> list[str]:
    """HTML parts for every scale's report: tables and heatmaps."""
    parts: list[str] = []
    for data in results:
        name = data["scale"] + (f".{data['dimension']}" if data.get("dimension") else "")
        parts.append(
            _table(
                f"Agreement on {name} ({data['level']}): {len(data['raters'])} raters, {data['units']} targets",
                ["statistic", "value [95% CI]", "n", "note"],
                [
                    [k, _estimate_text(v), v.get("n"), v.get("reason") or None]
                    for k, v in (data.get("overall") or {}).items()
                ],
            )
        )
        matrix = pair_matrix(data)
        if matrix is not None:
            statistic, raters, grid = matrix
            parts.append(
                heatmap(
                    f"{name}: pairwise {statistic}", raters, grid, low=0.0 if statistic == "percent_agreement" else -1.0
                )
            )
        ranking = data.get("model_ranking") or {}
        if ranking.get("spearman") and ranking.get("reason") is None:
            judges = sorted(ranking["spearman"])
            grid = [[_value(ranking["spearman"][a].get(b)) for b in judges] for a in judges]
            parts.append(heatmap(f"{name}: inter-judge Spearman of model rankings", judges, grid))
        for note in data.get("notes") or []:
            parts.append(f'<p class="notes">{_e(note)}</p>')
    return parts


def page(results: list[dict[str, Any]], title: str = "chainmark agreement") -> str:
    body = sections(results) or ["<p>No ratings to compare yet.</p>"]
    return "\n".join(
        [
            f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>',
            f"<style>{STYLE}</style></head><body>",
            f"<h1>{_e(title)}</h1>",
            *body,
            "</body></html>\n",
        ]
    )
