"""Inter-rater statistics, each returning an ``Estimate`` that is either a finite number or ``None``
with a reason — never NaN — so reports and JSON stay clean when a statistic is undefined.

Inputs are plain Python: a *reliability matrix* is a list of rows (one per rater) of equal length
(one column per unit) holding a value or ``None`` for "not rated".  Pairwise statistics take two
equal-length sequences and use only the positions where both are present.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import krippendorff
import numpy as np

Matrix = Sequence[Sequence[Any]]
WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class Estimate:
    """A statistic's value over ``n`` units, or ``value=None`` and the reason it is undefined."""

    value: float | None
    n: int
    reason: str | None = None
    ci: tuple[float, float] | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self, digits: int = 6) -> dict[str, Any]:
        return {
            "value": None if self.value is None else round(self.value, digits),
            "n": self.n,
            "reason": self.reason,
            "ci": None if self.ci is None else [round(self.ci[0], digits), round(self.ci[1], digits)],
        }


def undefined(reason: str, n: int = 0) -> Estimate:
    return Estimate(None, n, reason)


def _finite(value: float, n: int, why_not: str) -> Estimate:
    value = float(value)
    if math.isfinite(value):
        return Estimate(value, n)
    return undefined(why_not, n)


def _pairs(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[Any, Any]]:
    if len(a) != len(b):
        raise ValueError(f"paired statistics need equal lengths, got {len(a)} and {len(b)}")
    return [(x, y) for x, y in zip(a, b) if x is not None and y is not None]


def _columns(rows: Matrix) -> list[list[Any]]:
    """Units as lists of the values present (missing ratings dropped)."""
    if not rows:
        return []
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError("every rater row of a reliability matrix must have one cell per unit")
    return [[r[j] for r in rows if r[j] is not None] for j in range(width)]


# ------------------------------------------------------------------------------------------------
# Agreement on categories
# ------------------------------------------------------------------------------------------------


def percent_agreement(rows: Matrix) -> Estimate:
    """Mean over units (rated at least twice) of the share of rater pairs that gave the same value.

    With two raters this is the plain share of units on which they agree.
    """
    shares = []
    for values in _columns(rows):
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        shares.append(sum(c * (c - 1) for c in counts.values()) / (m * (m - 1)))
    if not shares:
        return undefined("no unit was rated by two or more raters")
    return Estimate(float(np.mean(shares)), len(shares))


def _weight_matrix(k: int, weights: str | None) -> np.ndarray:
    """Disagreement weights: 0 on the diagonal; 1 off it (unweighted), |i-j|/(k-1) or its square."""
    i, j = np.indices((k, k))
    if weights is None:
        return (i != j).astype(float)
    if k < 2:
        return np.zeros((k, k))
    d = np.abs(i - j) / (k - 1)
    if weights == "linear":
        return d
    if weights == "quadratic":
        return d**2
    raise ValueError(f"weights must be one of None, 'linear', 'quadratic'; got {weights!r}")


def cohen_kappa(
    a: Sequence[Any], b: Sequence[Any], categories: Sequence[Hashable] | None = None, weights: str | None = None
) -> Estimate:
    """Cohen's κ for two raters; ``weights`` linear/quadratic need ``categories`` in scale order.

    κ_w = 1 − Σ w·O / Σ w·E with O the observed and E the chance (product of marginals) proportions.
    Undefined when chance disagreement is zero (e.g. both raters used one and the same category).
    """
    pairs = _pairs(a, b)
    n = len(pairs)
    if n == 0:
        return undefined("the two raters share no rated unit")
    if categories is None:
        if weights is not None:
            raise ValueError("weighted κ needs the ordered categories of the scale")
        categories = sorted({v for p in pairs for v in p}, key=lambda v: (str(type(v)), v))
    index = {c: i for i, c in enumerate(categories)}
    missing = {v for p in pairs for v in p if v not in index}
    if missing:
        raise ValueError(f"values not on the scale: {sorted(map(str, missing))}")
    k = len(categories)
    observed = np.zeros((k, k))
    for x, y in pairs:
        observed[index[x], index[y]] += 1
    observed /= n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    w = _weight_matrix(k, weights)
    chance = float((w * expected).sum())
    if chance <= 1e-15:
        return undefined("κ is undefined: chance disagreement is zero (only one category used)", n)
    return _finite(1.0 - float((w * observed).sum()) / chance, n, "κ is not a finite number")


def fleiss_kappa_counts(counts: Sequence[Sequence[float]]) -> Estimate:
    """Fleiss' κ from a units × categories table of how many raters chose each category.

    Units may have different numbers of raters (each unit's agreement uses its own n_i); units rated
    fewer than twice are ignored.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.size == 0:
        return undefined("no units")
    n_i = table.sum(axis=1)
    table = table[n_i >= 2]
    n_i = n_i[n_i >= 2]
    if len(table) == 0:
        return undefined("no unit was rated by two or more raters")
    p_i = ((table * (table - 1)).sum(axis=1)) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    if p_e >= 1 - 1e-15:
        return undefined("Fleiss' κ is undefined: every rating is in one category", len(table))
    return _finite((p_bar - p_e) / (1 - p_e), len(table), "Fleiss' κ is not a finite number")


def fleiss_kappa(rows: Matrix, categories: Sequence[Hashable] | None = None) -> Estimate:
    """Fleiss' κ from a reliability matrix (raters × units, ``None`` = missing)."""
    cols = _columns(rows)
    cats = (
        list(categories)
        if categories is not None
        else sorted({v for c in cols for v in c}, key=lambda v: (str(type(v)), v))
    )
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cols), max(len(cats), 1)))
    for u, values in enumerate(cols):
        for v in values:
            if v not in index:
                raise ValueError(f"value {v!r} is not one of the categories")
            table[u, index[v]] += 1
    return fleiss_kappa_counts(table)


def krippendorff_alpha(rows: Matrix, level: str = "nominal", domain: Sequence[Any] | None = None) -> Estimate:
    """Krippendorff's α through the ``krippendorff`` package.

    Nominal data may hold any hashable values (they are coded here). Ordinal data must be given as
    ranks/codes in scale order, interval data as numbers; ``domain`` lists every possible value so
    ordinal distances count categories nobody used.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    cols = _columns(rows)
    pairable = sum(1 for c in cols if len(c) >= 2)
    if pairable == 0:
        return undefined("no unit was rated by two or more raters")
    data, dom = _alpha_array(rows, level, domain)
    values = {x for r in data for x in r if not math.isnan(x)}
    if len(values) < 2:
        return undefined("α is undefined: every rating has the same value (no variation)", pairable)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value = krippendorff.alpha(reliability_data=data, value_domain=dom, level_of_measurement=level)
    except ValueError as exc:
        return undefined(f"α is undefined: {exc}", pairable)
    return _finite(value, pairable, "α is undefined: expected disagreement is zero")


def _alpha_array(rows: Matrix, level: str, domain: Sequence[Any] | None) -> tuple[np.ndarray, list[float] | None]:
    """Rows as a float array for the ``krippendorff`` package (NaN = missing; nominal labels coded)."""
    if level == "nominal":
        seen = sorted({v for r in rows for v in r if v is not None}, key=lambda v: (str(type(v)), v))
        if domain is not None:
            seen = list(domain) + [v for v in seen if v not in set(domain)]
        code = {v: float(i) for i, v in enumerate(seen)}
        data = [[np.nan if v is None else code[v] for v in r] for r in rows]
        return np.asarray(data, dtype=float), sorted(code.values())
    data = [[np.nan if v is None else float(v) for v in r] for r in rows]
    dom = sorted({float(v) for v in domain}) if domain is not None else None
    return np.asarray(data, dtype=float), dom


# ------------------------------------------------------------------------------------------------
# Numeric association
# ------------------------------------------------------------------------------------------------


def _numeric_pairs(a: Sequence[Any], b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    pairs = _pairs(a, b)
    x = np.array([float(p[0]) for p in pairs])
    y = np.array([float(p[1]) for p in pairs])
    return x, y


def _correlation(x: np.ndarray, y: np.ndarray, name: str) -> Estimate:
    n = len(x)
    if n < 2:
        return undefined(f"{name} needs at least two paired values", n)
    dx, dy = x - x.mean(), y - y.mean()
    sx, sy = float(np.sqrt((dx**2).sum())), float(np.sqrt((dy**2).sum()))
    if sx == 0 or sy == 0:
        return undefined(f"{name} is undefined: one rater gave the same value to every unit", n)
    r = float((dx * dy).sum() / (sx * sy))
    return _finite(max(-1.0, min(1.0, r)), n, f"{name} is not a finite number")


def pearson(a: Sequence[Any], b: Sequence[Any]) -> Estimate:
    """Pearson's r over the units both raters rated."""
    x, y = _numeric_pairs(a, b)
    return _correlation(x, y, "Pearson's r")


def rankdata(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n, ties getting the average of the ranks they span."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: Sequence[Any], b: Sequence[Any]) -> Estimate:
    """Spearman's ρ: Pearson's r of average ranks (so ties are handled as scipy does)."""
    x, y = _numeric_pairs(a, b)
    return _correlation(rankdata(x), rankdata(y), "Spearman's ρ")


def mae(a: Sequence[Any], b: Sequence[Any]) -> Estimate:
    """Mean absolute difference over the units both raters rated."""
    x, y = _numeric_pairs(a, b)
    if len(x) == 0:
        return undefined("the two raters share no rated unit")
    return Estimate(float(np.abs(x - y).mean()), len(x))


# ------------------------------------------------------------------------------------------------
# Bootstrap
# ------------------------------------------------------------------------------------------------


def bootstrap_ci(
    rows: Matrix,
    statistic: Callable[[Matrix], Estimate],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile CI from resampling units (columns) with replacement, seeded so reports repeat.

    Resamples on which the statistic is undefined are dropped; if more than half are, there is no CI.
    """
    if not rows or resamples <= 0:
        return None
    width = len(rows[0])
    if width < 2:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        idx = rng.integers(0, width, size=width)
        sample = [[r[j] for j in idx] for r in rows]
        est = statistic(sample)
        if est.value is not None:
            values.append(est.value)
    if len(values) * 2 < resamples:
        return None
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def with_ci(
    rows: Matrix,
    statistic: Callable[[Matrix], Estimate],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """The statistic on the data plus its bootstrap CI (none when the point value is undefined)."""
    est = statistic(rows)
    if est.value is None:
        return est
    return replace(est, ci=bootstrap_ci(rows, statistic, resamples=resamples, seed=seed, confidence=confidence))


# ------------------------------------------------------------------------------------------------
# Judges: model rankings and correlated errors
# ------------------------------------------------------------------------------------------------


def rank_correlation_matrix(scores: dict[str, dict[str, float]]) -> dict[str, dict[str, Estimate]]:
    """Spearman ρ between judges' per-model scores (ATP-Bench Table 8b), over the models both scored."""
    judges = sorted(scores)
    out: dict[str, dict[str, Estimate]] = {}
    for a in judges:
        out[a] = {}
        for b in judges:
            models = sorted(set(scores[a]) & set(scores[b]))
            out[a][b] = spearman([scores[a][m] for m in models], [scores[b][m] for m in models])
    return out


@dataclass(frozen=True)
class ErrorCorrelation:
    """How alike judges' mistakes are, measured against reference values.

    ``matrix`` holds Pearson r between the judges' error series (signed error for numeric scales,
    0/1 "wrong" indicators for nominal ones); ``effective_judges`` is the participation ratio
    (Σλ)² / Σλ² of that correlation matrix's eigenvalues: k for independent errors, 1 when all
    judges err together.
    """

    judges: list[str]
    matrix: dict[str, dict[str, Estimate]]
    mean_offdiagonal: float | None
    effective_judges: float | None
    n_units: int
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": self.judges,
            "matrix": {a: {b: e.to_dict() for b, e in row.items()} for a, row in self.matrix.items()},
            "mean_offdiagonal": None if self.mean_offdiagonal is None else round(self.mean_offdiagonal, 6),
            "effective_judges": None if self.effective_judges is None else round(self.effective_judges, 6),
            "n_units": self.n_units,
            "reason": self.reason,
        }


def error_correlation(
    values: dict[str, dict[Hashable, Any]], reference: dict[Hashable, Any], *, nominal: bool
) -> ErrorCorrelation:
    """Correlate judges' errors on the units every judge rated and that have a reference value."""
    judges = sorted(values)
    units = [u for u in reference if all(u in values[j] for j in judges)]
    errors: dict[str, list[float]] = {}
    for j in judges:
        if nominal:
            errors[j] = [0.0 if values[j][u] == reference[u] else 1.0 for u in units]
        else:
            errors[j] = [float(values[j][u]) - float(reference[u]) for u in units]
    matrix = {a: {b: pearson(errors[a], errors[b]) for b in judges} for a in judges}
    if len(judges) < 2:
        return ErrorCorrelation(judges, matrix, None, None, len(units), "needs at least two judges")
    off = [matrix[a][b].value for i, a in enumerate(judges) for b in judges[i + 1 :]]
    if len(units) < 2 or any(v is None for v in off):
        return ErrorCorrelation(
            judges,
            matrix,
            None,
            None,
            len(units),
            "some judges' errors do not vary (or too few shared units), so their correlation is undefined",
        )
    r = np.array([[1.0 if a == b else matrix[a][b].value for b in judges] for a in judges], dtype=float)
    eig = np.clip(np.linalg.eigvalsh(r), 0.0, None)
    n_eff = float(eig.sum() ** 2 / (eig**2).sum())
    return ErrorCorrelation(judges, matrix, float(np.mean(off)), n_eff, len(units))


# ------------------------------------------------------------------------------------------------
# Vectorised bootstrap: the same statistics on many resamples at once (numpy), so CIs with 1000+
# resamples stay interactive on thousands of units.
# ------------------------------------------------------------------------------------------------

PAIR_STATISTICS = ("percent_agreement", "cohen_kappa", "pearson", "spearman", "mae")


def _indices(n: int, resamples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _interval(samples: np.ndarray, confidence: float) -> tuple[float, float] | None:
    ok = samples[np.isfinite(samples)]
    if len(ok) * 2 < len(samples) or len(ok) == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ok, [tail, 100 - tail])
    return float(lo), float(hi)


def _codes(values: Sequence[Any], categories: Sequence[Hashable] | None) -> tuple[np.ndarray, int]:
    cats = list(categories) if categories is not None else sorted(set(values), key=lambda v: (str(type(v)), v))
    index = {c: i for i, c in enumerate(cats)}
    missing = {v for v in values if v not in index}
    if missing:
        raise ValueError(f"values not on the scale: {sorted(map(str, missing))}")
    return np.array([index[v] for v in values], dtype=np.int64), len(cats)


def _row_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((dx**2).sum(axis=1) * (dy**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def _row_ranks(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Average ranks of values[idx] within each resample row, via counts of each distinct value."""
    uniq, codes = np.unique(values, return_inverse=True)
    k = len(uniq)
    b, n = idx.shape
    sampled = codes[idx]
    counts = np.bincount((sampled + np.arange(b)[:, None] * k).ravel(), minlength=b * k).reshape(b, k)
    before = np.cumsum(counts, axis=1) - counts
    avg = before + (counts + 1) / 2
    return np.take_along_axis(avg, sampled, axis=1)


def pair_bootstrap(
    a: Sequence[Any],
    b: Sequence[Any],
    statistic: str,
    *,
    categories: Sequence[Hashable] | None = None,
    weights: str | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile CI of a paired statistic over units resampled with replacement (all resamples at once).

    ``a`` and ``b`` hold the paired values only (no missing). Gives the same numbers as resampling
    and calling the scalar statistic each time.
    """
    if statistic not in PAIR_STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(PAIR_STATISTICS)}")
    n = len(a)
    if n < 2 or resamples <= 0:
        return None
    idx = _indices(n, resamples, seed)
    if statistic in ("percent_agreement", "cohen_kappa"):
        ca, k = _codes(list(a) + list(b), categories)
        xa, xb = ca[:n], ca[n:]
        if statistic == "percent_agreement":
            return _interval((xa[idx] == xb[idx]).mean(axis=1), confidence)
        flat = (xa[idx] * k + xb[idx] + np.arange(resamples)[:, None] * k * k).ravel()
        observed = np.bincount(flat, minlength=resamples * k * k).reshape(resamples, k, k) / n
        expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :]
        w = _weight_matrix(k, weights)
        chance = (w * expected).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = np.where(
                chance > 1e-15, 1 - (w * observed).sum(axis=(1, 2)) / np.where(chance > 1e-15, chance, 1), np.nan
            )
        return _interval(kappa, confidence)
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if statistic == "mae":
        return _interval(np.abs(x[idx] - y[idx]).mean(axis=1), confidence)
    if statistic == "pearson":
        return _interval(_row_pearson(x[idx], y[idx]), confidence)
    return _interval(_row_pearson(_row_ranks(x, idx), _row_ranks(y, idx)), confidence)


def matrix_bootstrap(
    rows: Matrix,
    statistic: str,
    *,
    level: str = "nominal",
    domain: Sequence[Any] | None = None,
    categories: Sequence[Hashable] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile CI of an all-raters statistic (percent_agreement, fleiss_kappa, krippendorff_alpha)
    over resampled pairable units (units rated at least twice; the others do not enter any of them)."""
    cols = _columns(rows)
    keep = [j for j, c in enumerate(cols) if len(c) >= 2]
    if len(keep) < 2 or resamples <= 0:
        return None
    idx = _indices(len(keep), resamples, seed)
    if statistic in ("percent_agreement", "fleiss_kappa"):
        cats = (
            list(categories)
            if categories is not None
            else sorted({v for j in keep for v in cols[j]}, key=lambda v: (str(type(v)), v))
        )
        index = {c: i for i, c in enumerate(cats)}
        table = np.zeros((len(keep), len(cats)))
        for u, j in enumerate(keep):
            for v in cols[j]:
                table[u, index[v]] += 1
        n_i = table.sum(axis=1)
        p_i = (table * (table - 1)).sum(axis=1) / (n_i * (n_i - 1))
        if statistic == "percent_agreement":
            return _interval(p_i[idx].mean(axis=1), confidence)
        p_bar = p_i[idx].mean(axis=1)
        sampled = table[idx]  # (B, n, k)
        p_j = sampled.sum(axis=1) / n_i[idx].sum(axis=1)[:, None]
        p_e = (p_j**2).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = np.where(p_e < 1 - 1e-15, (p_bar - p_e) / np.where(p_e < 1 - 1e-15, 1 - p_e, 1), np.nan)
        return _interval(kappa, confidence)
    if statistic != "krippendorff_alpha":
        raise ValueError(f"unknown matrix statistic {statistic!r}")
    data, dom = _alpha_array([[r[j] for j in keep] for r in rows], level, domain)
    samples = np.full(resamples, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, sample in enumerate(idx):
            try:
                samples[i] = krippendorff.alpha(
                    reliability_data=data[:, sample], value_domain=dom, level_of_measurement=level
                )
            except ValueError:  # a resample with no variation
                pass
    return _interval(samples, confidence)
