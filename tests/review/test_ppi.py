"""Prediction-powered estimates: equal to ppi-python's on the same inputs, and honest in simulation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluation.agreement import ppi


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def _study(rng: np.random.Generator, n: int, big_n: int, accuracy: float, bias: float) -> Arrays:
    """A binary benchmark: truth ~ Bernoulli(0.6); the judge agrees with it at ``accuracy``, and on
    top says "pass" for a ``bias`` share of the failures (a lenient judge)."""
    truth = (rng.random(n + big_n) < 0.6).astype(float)
    judge = np.where(rng.random(truth.size) < accuracy, truth, 1 - truth)
    judge = np.where((truth == 0) & (rng.random(truth.size) < bias), 1.0, judge)
    return truth[:n], judge[:n], judge[n:]


def _numeric(rng: np.random.Generator, n: int, big_n: int) -> Arrays:
    truth = rng.normal(6.0, 2.0, n + big_n).clip(1, 10)
    judge = (0.8 * truth + 2.0 + rng.normal(0, 1.0, truth.size)).clip(1, 10)
    return truth[:n], judge[:n], judge[n:]


def _flipped(arrays: Arrays) -> Arrays:
    """The same study with a judge that says the opposite."""
    y, yh, yu = arrays
    return y, 1 - yh, 1 - yu


CASES = [
    ("binary", lambda rng: _study(rng, 120, 900, 0.85, 0.2)),
    ("binary-small", lambda rng: _study(rng, 7, 40, 0.7, 0.0)),
    ("numeric", lambda rng: _numeric(rng, 200, 3000)),
    ("anticorrelated", lambda rng: _flipped(_study(rng, 50, 300, 0.9, 0.0))),
]


ALPHAS = (0.05, 0.1)
LAMBDAS = (1.0, None, 0.0, 0.4)
RECORDED = Path(__file__).parent / "data" / "ppi_python_values.json"


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_equals_the_values_ppi_python_gave(name, make) -> None:
    """The library's own answers on these inputs, recorded by ``bench/record_ppi_values.py`` (the library
    and its numba/statsmodels stack are not installed for the suite; the live test below runs where they are)."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))["cases"][name]
    y, yh, yu = make(np.random.default_rng(7))
    for row in recorded:
        if "classical" in row:
            c = ppi.classical_interval(y, row["alpha"])
            assert [c.low, c.high] == pytest.approx(row["classical"], abs=1e-9)
            continue
        ours = ppi.ppi_interval(y, yh, yu, alpha=row["alpha"], lam=row["lam"])
        assert (ours.estimate, ours.low, ours.high) == pytest.approx(
            (row["estimate"], row["low"], row["high"]), abs=1e-9
        )
    assert len(recorded) == len(ALPHAS) * (len(LAMBDAS) + 1)


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_equals_ppi_python(name, make) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    y, yh, yu = make(np.random.default_rng(7))
    for alpha in ALPHAS:
        for lam in LAMBDAS:
            ours = ppi.ppi_interval(y, yh, yu, alpha=alpha, lam=lam)
            point = ppi_py.ppi_mean_pointestimate(y, yh, yu, lam=lam)
            low, high = ppi_py.ppi_mean_ci(y, yh, yu, alpha=alpha, lam=lam)
            assert ours.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-9)
            assert ours.low == pytest.approx(float(np.squeeze(low)), abs=1e-9)
            assert ours.high == pytest.approx(float(np.squeeze(high)), abs=1e-9)
        classical = ppi.classical_interval(y, alpha)
        low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
        assert (classical.low, classical.high) == (
            pytest.approx(float(low), abs=1e-9),
            pytest.approx(float(high), abs=1e-9),
        )
    if name == "anticorrelated":  # the library clips lambda at 0: the judge is ignored, not inverted
        assert ppi.power_tuned_lambda(y, yh, yu) == 0.0


def test_known_values_without_the_library() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    yh = np.array([1.0, 0.0, 0.0, 1.0])
    yu = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    found = ppi.ppi_interval(y, yh, yu, lam=1.0)
    # 3/6 judged over the rest + mean correction 1/4; se² = 0.25/6 + (0.1875)/4
    assert found.estimate == pytest.approx(0.75)
    se = np.sqrt(0.25 / 6 + 0.1875 / 4)
    assert found.low == pytest.approx(0.75 - 1.959963984540054 * se, abs=1e-12)
    assert ppi.ppi_interval(y[:1], yh[:1], yu).reason == "needs 2 or more human labels, has 1"
    every = ppi.ppi_interval(y, yh, [], lam=None)
    assert every.estimate == 0.75 and every.reason == "every item has a human label"
    assert ppi.z_quantile(0.05) == pytest.approx(1.959963984540054, abs=1e-12)


def _simulate(rng: np.random.Generator, studies: int) -> dict[str, np.ndarray]:
    """Many binary studies with known truth: judge accuracy 0.7-0.95, some biased, 100-500 labels."""
    big_n = 2000
    covered = {m: np.zeros(studies, bool) for m in ppi.METHODS}
    widths = {m: np.zeros(studies) for m in ppi.METHODS}
    agreement, biased = np.zeros(studies), np.zeros(studies, bool)
    for k in range(studies):
        accuracy, n = rng.uniform(0.7, 0.95), int(rng.integers(100, 501))
        bias, rate = (0.3 if k % 2 else 0.0), rng.uniform(0.3, 0.8)
        truth = (rng.random(n + big_n) < rate).astype(float)
        judge = np.where(rng.random(truth.size) < accuracy, truth, 1 - truth)
        judge = np.where((truth == 0) & (rng.random(truth.size) < bias), 1.0, judge)
        target = rate  # the model's true pass rate, which the benchmark's items are drawn from
        found = ppi.estimate_mean(truth[:n], judge[:n], judge[n:])
        for method, interval in zip(ppi.METHODS, (found.judge_only, found.human_only, found.ppi, found.ppi_plus)):
            covered[method][k] = interval.covers(target)
            widths[method][k] = interval.width or 0.0
        agreement[k], biased[k] = (truth == judge).mean(), bias > 0
    return (
        {"agreement": agreement, "biased": biased}
        | {f"cover:{m}": c for m, c in covered.items()}
        | {f"width:{m}": w for m, w in widths.items()}
    )


def test_simulated_studies_cover_the_truth() -> None:
    """1,000 simulated studies: PPI covers 93-97 %, the biased judge alone far less, and PPI is
    narrower than the people alone whenever judge and people agree on 80 % or more."""
    sim = _simulate(np.random.default_rng(2023), 1000)
    for method in (ppi.PPI, ppi.PPI_PLUS, ppi.HUMAN_ONLY):
        assert 0.93 <= sim[f"cover:{method}"].mean() <= 0.97, (method, sim[f"cover:{method}"].mean())
    biased = sim["biased"]
    assert sim[f"cover:{ppi.JUDGE_ONLY}"][biased].mean() < 0.2
    assert 0.93 <= sim[f"cover:{ppi.PPI_PLUS}"][biased].mean() <= 0.97
    good = sim["agreement"] >= 0.8
    assert good.sum() > 300
    assert (sim[f"width:{ppi.PPI_PLUS}"][good] < sim[f"width:{ppi.HUMAN_ONLY}"][good]).all()
    assert (sim[f"width:{ppi.PPI_PLUS}"] <= sim[f"width:{ppi.HUMAN_ONLY}"] * 1.01).all()


def test_labels_for_a_target_width() -> None:
    rng = np.random.default_rng(5)
    y, yh, yu = _study(rng, 100, 2000, 0.9, 0.0)
    width = ppi.ppi_interval(y, yh, yu, lam=None).width
    assert width is not None
    assert ppi.labels_for_width(y, yh, yu, width + 0.01) == 0
    more = ppi.labels_for_width(y, yh, yu, width * 0.7)
    assert more is not None and 50 < more < 300  # width falls as 1/sqrt(n): about (1/0.7)² - 1 ≈ 1.04 × 100
    # labelling those items (from the same population) does reach the width, give or take noise
    y2, yh2, yu2 = _study(np.random.default_rng(6), 100 + more, 2000 - more, 0.9, 0.0)
    assert ppi.ppi_interval(y2, yh2, yu2, lam=None).width == pytest.approx(width * 0.7, rel=0.1)
    assert ppi.labels_for_width(y, yh, yu, 0.0001) is None  # not even labelling all 2,100 items


def test_stratified_combination() -> None:
    a = ppi.Interval(ppi.PPI_PLUS, 0.2, 0.1, 0.3, 10, 90)
    b = ppi.Interval(ppi.PPI_PLUS, 0.8, 0.6, 1.0, 10, 290)
    both = ppi.stratified([(100, a), (300, b)], ppi.PPI_PLUS)
    assert both.estimate == pytest.approx(0.25 * 0.2 + 0.75 * 0.8)
    assert both.width == pytest.approx(2 * np.sqrt((0.25 * 0.1) ** 2 + (0.75 * 0.2) ** 2))
    assert both.n_labelled == 20
    missing = ppi.Interval(ppi.PPI_PLUS, None, None, None, 1, 50)
    assert ppi.stratified([(100, a), (51, missing)], ppi.PPI_PLUS).estimate is None
