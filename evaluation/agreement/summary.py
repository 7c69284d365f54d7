"""The agreement report for one rating matrix: all raters together, then every pair of raters.

Which statistics apply follows the scale's level: every level gets percent agreement, Cohen's κ,
Fleiss' κ and Krippendorff's α (at the scale's level); ordinal and interval scales also get
weighted κ (when every value is on the scale), Pearson, Spearman and MAE. Point values come with
seeded bootstrap CIs over units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
        return {"a": self.a, "b": self.b, "kind": self.kind, "n": self.n,
                "statistics": {k: v.to_dict() for k, v in self.statistics.items()}}


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
        return {"scale": self.scale, "dimension": self.dimension, "level": self.level, "raters": self.raters,
                "units": self.units, "overall": {k: v.to_dict() for k, v in self.overall.items()},
                "pairs": [p.to_dict() for p in self.pairs], "notes": self.notes}


def _safe(fn: Any) -> Any:
    """Statistics that refuse values (e.g. 6.6 on a 1-10 integer scale for κ) become 'undefined'."""
    def run(*args: Any) -> stats.Estimate:
        try:
            return fn(*args)
        except ValueError as exc:
            return stats.undefined(str(exc))
    return run


def pair_statistics(matrix: RatingMatrix, a: str, b: str, *, resamples: int, seed: int) -> PairReport:
    scale = matrix.scale
    cats = scale.values
    raw = matrix.rows([a, b])
    shared = [j for j in range(len(matrix.units)) if raw[0][j] is not None and raw[1][j] is not None]
    raw = [[row[j] for j in shared] for row in raw]
    num = [[row[j] for j in shared] for row in matrix.ranked_rows([a, b])] if scale.numeric or \
        scale.level == "ordinal" else None
    out = PairReport(a, b, pair_kind(a, b), len(shared))
    ci = {"resamples": resamples, "seed": seed}
    out.statistics["percent_agreement"] = stats.with_ci(raw, stats.percent_agreement, **ci)
    out.statistics["cohen_kappa"] = stats.with_ci(raw, _safe(lambda m: stats.cohen_kappa(m[0], m[1])), **ci)
    if scale.level in ("ordinal", "interval"):
        for w in ("linear", "quadratic"):
            out.statistics[f"cohen_kappa_{w}"] = stats.with_ci(
                raw, _safe(lambda m, w=w: stats.cohen_kappa(m[0], m[1], cats, w)), **ci)
    if num is not None:
        out.statistics["pearson"] = stats.with_ci(num, _safe(lambda m: stats.pearson(m[0], m[1])), **ci)
        out.statistics["spearman"] = stats.with_ci(num, _safe(lambda m: stats.spearman(m[0], m[1])), **ci)
        if scale.numeric:
            out.statistics["mae"] = stats.with_ci(num, _safe(lambda m: stats.mae(m[0], m[1])), **ci)
    return out


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
        return AgreementReport(scale.name, matrix.dimension, scale.level, matrix.raters, len(matrix.units),
                               overall, [], notes)
    overall["percent_agreement"] = stats.with_ci(rows, stats.percent_agreement, **ci)
    overall["fleiss_kappa"] = stats.with_ci(rows, _safe(stats.fleiss_kappa), **ci)
    if scale.level == "nominal":
        alpha_rows, domain = rows, scale.values
    else:
        alpha_rows = matrix.ranked_rows()
        domain = list(range(len(scale.values))) if scale.level == "ordinal" else None
    overall[f"krippendorff_alpha_{scale.level}"] = stats.with_ci(
        alpha_rows, _safe(lambda m: stats.krippendorff_alpha(m, scale.level, domain)), **ci)
    pairs = []
    for a, b in combinations(matrix.raters, 2):
        report = pair_statistics(matrix, a, b, resamples=resamples, seed=seed)
        if report.n:
            pairs.append(report)
    return AgreementReport(scale.name, matrix.dimension, scale.level, matrix.raters, len(matrix.units), overall,
                           pairs, notes)
