"""Prediction-powered inference (PPI) for a model's mean score: a judge on every item, people on some.

The judge alone is biased, the people alone are few. PPI (Angelopoulos et al., Science 2023) adds the
judge's mean over the items nobody labelled to the people's mean correction of the judge on the
items they did label; the result is unbiased, and its interval is narrower than the people's alone
whenever the judge tracks them. PPI++ (Angelopoulos, Duchi & Zrnic 2024) scales the judge by a
power-tuning weight lambda in [0, 1] chosen from the data: lambda = 1 is classical PPI, lambda = 0
the people's mean, so PPI++ is never much wider than either.

Everything here follows the formulas of the field's library ``ppi-python`` (``ppi_py.ppi_mean_ci``,
``ppi_mean_pointestimate``, ``classical_mean_ci``) and equals it to 1e-9 on the same inputs
(tests/review/test_ppi.py); it needs only numpy and the standard library's normal quantile.

Inputs are 1-D arrays: ``human`` (people's values on the labelled items), ``judged`` (the judge on
those same items) and ``unlabelled`` (the judge on every other item). Binary judges are 0/1 values.
Intervals are normal (CLT) intervals; with fewer than two labels an interval is undefined.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

DEFAULT_ALPHA = 0.05
JUDGE_ONLY, HUMAN_ONLY, PPI, PPI_PLUS = "judge_only", "human_only", "ppi", "ppi++"
METHODS = (JUDGE_ONLY, HUMAN_ONLY, PPI, PPI_PLUS)


@dataclass(frozen=True)
class Interval:
    """One way of estimating the mean: the point estimate, its two-sided CI, and what it rests on."""

    method: str
    estimate: float | None
    low: float | None
    high: float | None
    n_labelled: int
    n_unlabelled: int
    lam: float | None = None
    reason: str | None = None

    @property
    def width(self) -> float | None:
        return None if self.low is None or self.high is None else self.high - self.low

    def covers(self, value: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    def to_dict(self, digits: int = 6) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, digits)

        return {
            "method": self.method,
            "estimate": r(self.estimate),
            "ci": None if self.low is None else [r(self.low), r(self.high)],
            "width": r(self.width),
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
            "lambda": r(self.lam),
            "reason": self.reason,
        }


def z_quantile(alpha: float = DEFAULT_ALPHA) -> float:
    """The normal quantile of a two-sided (1 - alpha) interval (1.959964 for 95 %)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return NormalDist().inv_cdf(1 - alpha / 2)


def _array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=float).reshape(-1)


def _interval(method: str, centre: float, se: float, alpha: float, n: int, big_n: int, lam: float | None) -> Interval:
    half = z_quantile(alpha) * se
    return Interval(method, float(centre), float(centre - half), float(centre + half), n, big_n, lam)


def classical_interval(
    values: Sequence[float] | np.ndarray, alpha: float = DEFAULT_ALPHA, method: str = HUMAN_ONLY
) -> Interval:
    """The mean of ``values`` with its CLT interval (population standard deviation, as ppi_py's
    ``classical_mean_ci``)."""
    y = _array(values)
    n = y.size
    if n < 2:
        return Interval(
            method, float(y.mean()) if n else None, None, None, n, 0, reason=f"needs 2 or more values, has {n}"
        )
    return _interval(method, float(y.mean()), float(y.std() / math.sqrt(n)), alpha, n, 0, None)


def judge_only_interval(
    judged: Sequence[float] | np.ndarray, unlabelled: Sequence[float] | np.ndarray, alpha: float = DEFAULT_ALPHA
) -> Interval:
    """The judge's own mean over every item, as if it were the truth: narrow, and wrong by its bias."""
    every = np.concatenate([_array(judged), _array(unlabelled)])
    found = classical_interval(every, alpha, JUDGE_ONLY)
    return Interval(JUDGE_ONLY, found.estimate, found.low, found.high, 0, every.size, None, found.reason)


def power_tuned_lambda(
    human: Sequence[float] | np.ndarray, judged: Sequence[float] | np.ndarray, unlabelled: Sequence[float] | np.ndarray
) -> float:
    """PPI++'s variance-minimising weight on the judge, clipped to [0, 1]:
    cov(Y, Yhat) / ((1 + n/N) var(Yhat over all items)), the library's estimator exactly
    (labelled covariance divided by n, pooled judge variance with n + N - 1)."""
    y, yh, yu = _array(human), _array(judged), _array(unlabelled)
    n, big_n = y.size, yu.size
    if n < 2 or big_n < 1:
        return 0.0
    covariance = float(((y - y.mean()) * (yh - yh.mean())).sum() / n)
    pooled = np.concatenate([yh, yu])
    variance = float(pooled.var(ddof=1)) if pooled.size > 1 else 0.0
    if variance <= 0:
        return 0.0  # a constant judge carries no information
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def ppi_interval(
    human: Sequence[float] | np.ndarray,
    judged: Sequence[float] | np.ndarray,
    unlabelled: Sequence[float] | np.ndarray,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = 1.0,
) -> Interval:
    """The prediction-powered mean and interval; ``lam=None`` tunes lambda (PPI++), 1 is classical PPI."""
    y, yh, yu = _array(human), _array(judged), _array(unlabelled)
    method = PPI_PLUS if lam is None else PPI
    n, big_n = y.size, yu.size
    if y.size != yh.size:
        raise ValueError(f"human and judged values must pair up, got {y.size} and {yh.size}")
    if n < 2:
        return Interval(method, None, None, None, n, big_n, reason=f"needs 2 or more human labels, has {n}")
    if big_n == 0:  # every item has a label: nothing left for the judge to add
        found = classical_interval(y, alpha, method)
        return Interval(method, found.estimate, found.low, found.high, n, 0, 0.0, "every item has a human label")
    weight = power_tuned_lambda(y, yh, yu) if lam is None else float(lam)
    centre = float((weight * yu).mean() + (y - weight * yh).mean())
    se = math.sqrt(float((weight * yu).std()) ** 2 / big_n + float((y - weight * yh).std()) ** 2 / n)
    return _interval(method, centre, se, alpha, n, big_n, weight)


@dataclass(frozen=True)
class MeanEstimates:
    """The three ways (PPI in its classical and power-tuned forms) side by side."""

    judge_only: Interval
    human_only: Interval
    ppi: Interval
    ppi_plus: Interval

    @property
    def best(self) -> Interval:
        """The prediction-powered interval to report: PPI++ (never much wider than either source)."""
        return self.ppi_plus

    def width_gained(self) -> float | None:
        """How much narrower the PPI++ interval is than the people's alone (a share, 0.3 = 30 %)."""
        h, p = self.human_only.width, self.ppi_plus.width
        if h is None or p is None or h <= 0:
            return None
        return 1 - p / h

    def effective_labels(self) -> float | None:
        """How many human labels the people alone would need for PPI++'s width."""
        h, p = self.human_only.width, self.ppi_plus.width
        if h is None or p is None or p <= 0:
            return None
        return self.human_only.n_labelled * (h / p) ** 2

    def to_dict(self, digits: int = 6) -> dict[str, Any]:
        gained, effective = self.width_gained(), self.effective_labels()
        return {
            JUDGE_ONLY: self.judge_only.to_dict(digits),
            HUMAN_ONLY: self.human_only.to_dict(digits),
            PPI: self.ppi.to_dict(digits),
            PPI_PLUS: self.ppi_plus.to_dict(digits),
            "width_gained": None if gained is None else round(gained, digits),
            "effective_labels": None if effective is None else round(effective, 2),
        }


def estimate_mean(
    human: Sequence[float] | np.ndarray,
    judged: Sequence[float] | np.ndarray,
    unlabelled: Sequence[float] | np.ndarray,
    alpha: float = DEFAULT_ALPHA,
) -> MeanEstimates:
    return MeanEstimates(
        judge_only_interval(judged, unlabelled, alpha),
        classical_interval(human, alpha),
        ppi_interval(human, judged, unlabelled, alpha, lam=1.0),
        ppi_interval(human, judged, unlabelled, alpha, lam=None),
    )


def projected_width(
    human: Sequence[float] | np.ndarray,
    judged: Sequence[float] | np.ndarray,
    unlabelled: Sequence[float] | np.ndarray,
    labels: np.ndarray,
    alpha: float = DEFAULT_ALPHA,
) -> np.ndarray:
    """The PPI++ width expected with ``labels`` human labels in all (same total items), from the
    variances seen so far: the rectifier's variance over n plus the judge's over the rest."""
    y, yh, yu = _array(human), _array(judged), _array(unlabelled)
    total = y.size + yu.size
    lam = power_tuned_lambda(y, yh, yu)
    rectifier = float((y - lam * yh).var())
    judge = float(np.concatenate([yh, yu]).var()) * lam**2
    n = np.asarray(labels, dtype=float)
    rest = total - n
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = rectifier / n + np.where(rest > 0, judge / np.maximum(rest, 1), 0.0)
    return 2 * z_quantile(alpha) * np.sqrt(variance)


def labels_for_width(
    human: Sequence[float] | np.ndarray,
    judged: Sequence[float] | np.ndarray,
    unlabelled: Sequence[float] | np.ndarray,
    target: float,
    alpha: float = DEFAULT_ALPHA,
) -> int | None:
    """How many MORE human labels the PPI++ interval needs to be at most ``target`` wide (0 if it
    already is; None when even labelling every item would not get there, or too few labels to say)."""
    y = _array(human)
    total = y.size + _array(unlabelled).size
    if y.size < 2:
        return None
    counts = np.arange(y.size, total + 1)
    widths = projected_width(human, judged, unlabelled, counts, alpha)
    hits = np.nonzero(widths <= target)[0]
    return int(counts[hits[0]] - y.size) if hits.size else None


def stratified(parts: Sequence[tuple[int, Interval]], method: str, alpha: float = DEFAULT_ALPHA) -> Interval:
    """Strata (item count, interval) combined: the size-weighted mean and the matching standard error.
    Valid when labels were drawn at random within each stratum, at whatever rate (the planner's way)."""
    total = sum(size for size, _ in parts)
    z = z_quantile(alpha)
    labelled = sum(i.n_labelled for _, i in parts)
    unlabelled = sum(i.n_unlabelled for _, i in parts)
    missing = [i for _, i in parts if i.estimate is None or i.width is None]
    if not parts or total == 0 or missing:
        return Interval(
            method, None, None, None, labelled, unlabelled, reason="a stratum has fewer than 2 human labels"
        )
    centre = sum(size / total * (i.estimate or 0.0) for size, i in parts)
    se = math.sqrt(sum((size / total * (i.width or 0.0) / (2 * z)) ** 2 for size, i in parts))
    return _interval(method, centre, se, alpha, labelled, unlabelled, None)
