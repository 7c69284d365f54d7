"""The agreement report for one rating matrix: all raters together, then every pair of raters.

Which statistics apply follows the scale's level: every level gets percent agreement, Cohen's κ,
Fleiss' κ and Krippendorff's α (at the scale's level); ordinal and interval scales also get
weighted κ (when every value is on the scale), Pearson, Spearman and MAE. Point values come with
seeded bootstrap CIs over units.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from evaluation.agreement import stats
from evaluation.agreement.matrix import RatingMatrix, pair_kind


@dataclass
class PairReport:
    a: str
    b: str
    kind: str
    n: int
    statistics: dict[str, stats.Estimate] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "n": self.n,
            "statistics": {k: v.to_dict() for k, v in self.statistics.items()},
        }


@dataclass
class AgreementReport:
    scale: str
    dimension: str
    level: str
    raters: list[str]
    units: int
    overall: dict[str, stats.Estimate]
    pairs: list[PairReport]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "dimension": self.dimension,
            "level": self.level,
            "raters": self.raters,
            "units": self.units,
            "overall": {k: v.to_dict() for k, v in self.overall.items()},
            "pairs": [p.to_dict() for p in self.pairs],
            "notes": self.notes,
        }


def _guard(fn: Any, *args: Any, **kw: Any) -> Any:
    """Statistics that refuse values (e.g. 6.6 on a 1-10 integer scale for κ) become 'undefined'."""
    try:
        return fn(*args, **kw)
    except ValueError as exc:
        return stats.undefined(str(exc))


def _ci(fn: Any, *args: Any, **kw: Any) -> tuple[float, float] | None:
    try:
        return fn(*args, **kw)
    except ValueError:
        return None


def _with_pair_ci(
    est: stats.Estimate, a: list[Any], b: list[Any], name: str, ci: dict[str, int], **kw: Any
) -> stats.Estimate:
    if est.value is None:
        return est
    return replace(est, ci=_ci(stats.pair_bootstrap, a, b, name, **kw, **ci) if ci["resamples"] else None)


def pair_statistics(matrix: RatingMatrix, a: str, b: str, *, resamples: int, seed: int) -> PairReport:
    scale = matrix.scale
    cats = scale.values
    raw = matrix.rows([a, b])
    shared = [j for j in range(len(matrix.units)) if raw[0][j] is not None and raw[1][j] is not None]
    x, y = [raw[0][j] for j in shared], [raw[1][j] for j in shared]
    out = PairReport(a, b, pair_kind(a, b), len(shared))
    ci = {"resamples": resamples, "seed": seed}
    put = out.statistics
    put["percent_agreement"] = _with_pair_ci(stats.percent_agreement([x, y]), x, y, "percent_agreement", ci)
    put["cohen_kappa"] = _with_pair_ci(_guard(stats.cohen_kappa, x, y), x, y, "cohen_kappa", ci)
    if scale.level in ("ordinal", "interval"):
        for w in ("linear", "quadratic"):
            put[f"cohen_kappa_{w}"] = _with_pair_ci(
                _guard(stats.cohen_kappa, x, y, cats, w), x, y, "cohen_kappa", ci, categories=cats, weights=w
            )
    if scale.numeric or scale.level == "ordinal":
        ranked = matrix.ranked_rows([a, b])
        nx, ny = [ranked[0][j] for j in shared], [ranked[1][j] for j in shared]
        put["pearson"] = _with_pair_ci(_guard(stats.pearson, nx, ny), nx, ny, "pearson", ci)
        put["spearman"] = _with_pair_ci(_guard(stats.spearman, nx, ny), nx, ny, "spearman", ci)
        if scale.numeric:
            put["mae"] = _with_pair_ci(_guard(stats.mae, nx, ny), nx, ny, "mae", ci)
    return out


def _with_matrix_ci(
    est: stats.Estimate, rows: list[list[Any]], name: str, ci: dict[str, int], **kw: Any
) -> stats.Estimate:
    if est.value is None or not ci["resamples"]:
        return est
    return replace(est, ci=_ci(stats.matrix_bootstrap, rows, name, **kw, **ci))


def agreement_report(matrix: RatingMatrix, *, resamples: int = 1000, seed: int = 0) -> AgreementReport:
    scale = matrix.scale
    notes = list(matrix.notes)
    ci = {"resamples": resamples, "seed": seed}
    rows = matrix.rows()
    overall: dict[str, stats.Estimate] = {}
    if len(matrix.raters) < 2:
        reason = f"needs two or more raters; {len(matrix.raters)} rated on {matrix.title}"
        for name in ("percent_agreement", "fleiss_kappa", f"krippendorff_alpha_{scale.level}"):
            overall[name] = stats.undefined(reason)
        return AgreementReport(
            scale.name, matrix.dimension, scale.level, matrix.raters, len(matrix.units), overall, [], notes
        )
    for name, fn in (("percent_agreement", stats.percent_agreement), ("fleiss_kappa", stats.fleiss_kappa)):
        overall[name] = _with_matrix_ci(_guard(fn, rows), rows, name, ci)
    if scale.level == "nominal":
        alpha_rows, domain = rows, scale.values
    else:
        alpha_rows = matrix.ranked_rows()
        domain = list(range(len(scale.values))) if scale.level == "ordinal" else None
    overall[f"krippendorff_alpha_{scale.level}"] = _with_matrix_ci(
        _guard(stats.krippendorff_alpha, alpha_rows, scale.level, domain),
        alpha_rows,
        "krippendorff_alpha",
        ci,
        level=scale.level,
        domain=domain,
    )
    pairs = []
    for a, b in combinations(matrix.raters, 2):
        report = pair_statistics(matrix, a, b, resamples=resamples, seed=seed)
        if report.n:
            pairs.append(report)
    return AgreementReport(
        scale.name, matrix.dimension, scale.level, matrix.raters, len(matrix.units), overall, pairs, notes
    )
