"""Agreement statistics against published worked examples and hand computations."""

from __future__ import annotations

import json
import math

import pytest

from evaluation.agreement import stats

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers × 12 units example.
KRIPP = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_krippendorff_classic_example_all_levels() -> None:
    assert stats.krippendorff_alpha(KRIPP, "nominal").value == pytest.approx(0.743, abs=5e-4)
    assert stats.krippendorff_alpha(KRIPP, "ordinal").value == pytest.approx(0.815, abs=5e-4)
    assert stats.krippendorff_alpha(KRIPP, "interval").value == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_nominal_accepts_labels() -> None:
    letters = [[None if v is None else "abcde"[v - 1] for v in row] for row in KRIPP]
    assert stats.krippendorff_alpha(letters, "nominal").value == pytest.approx(0.7434, abs=1e-4)
    # units rated once (unit 12 here) do not count as pairable
    assert stats.krippendorff_alpha(letters, "nominal").n == 11


def _wikipedia_cohen() -> tuple[list[str], list[str]]:
    # 50 proposals: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> κ = 0.4
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    return a, b


def test_cohen_kappa_wikipedia_example() -> None:
    a, b = _wikipedia_cohen()
    est = stats.cohen_kappa(a, b)
    assert est.value == pytest.approx(0.4)
    assert est.n == 50
    assert stats.percent_agreement([a, b]).value == pytest.approx(0.7)


def test_weighted_kappa_by_hand() -> None:
    # pairs: (0,0)x3 (0,1)x1 (1,1)x2 (1,2)x1 (2,2)x2 (2,0)x1; marginals A=B=[.4,.3,.3]
    pairs = [(0, 0)] * 3 + [(0, 1)] + [(1, 1)] * 2 + [(1, 2)] + [(2, 2)] * 2 + [(2, 0)]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    cats = [0, 1, 2]
    # unweighted: po = .7, pe = .34 -> 6/11
    assert stats.cohen_kappa(a, b, cats).value == pytest.approx(6 / 11)
    # linear: ΣwO = .2, ΣwE = .45 -> 5/9
    assert stats.cohen_kappa(a, b, cats, "linear").value == pytest.approx(5 / 9)
    # quadratic: ΣwO = .15, ΣwE = 2(.03) + 2(.0225) + 2(.12) = .345 -> 1 - 10/23 = 13/23
    assert stats.cohen_kappa(a, b, cats, "quadratic").value == pytest.approx(13 / 23)


def test_fleiss_kappa_wikipedia_example() -> None:
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert stats.fleiss_kappa_counts(counts).value == pytest.approx(0.210, abs=5e-4)
    # the same data as a 14 raters × 10 units reliability matrix
    rows = [[None] * 10 for _ in range(14)]
    for unit, row in enumerate(counts):
        r = 0
        for cat, c in enumerate(row):
            for _ in range(c):
                rows[r][unit] = cat
                r += 1
    assert stats.fleiss_kappa(rows).value == pytest.approx(0.2099, abs=1e-4)


def test_pearson_spearman_mae() -> None:
    x = [1, 2, 3, 4, 5]
    y = [2, 4, 5, 4, 5]
    # r = 6 / sqrt(10 * 6) by hand
    assert stats.pearson(x, y).value == pytest.approx(6 / math.sqrt(60))
    # ranks of y with ties: [1, 2.5, 4.5, 2.5, 4.5]; deviations from 3 give Σdxdy = 7, Σdy² = 9
    ry = stats.rankdata(y)
    assert list(ry) == [1.0, 2.5, 4.5, 2.5, 4.5]
    assert stats.spearman(x, y).value == pytest.approx(7 / math.sqrt(10 * 9))
    assert stats.mae(x, y).value == pytest.approx((1 + 2 + 2 + 0 + 0) / 5)
    # missing values are dropped pairwise
    assert stats.mae([1, None, 3], [2, 5, None]).n == 1


def test_edge_cases_are_defined_or_explained() -> None:
    one_cat = [["yes"] * 5, ["yes"] * 5]
    k = stats.cohen_kappa(*one_cat)
    assert k.value is None and "one category" in (k.reason or "")
    assert stats.percent_agreement(one_cat).value == 1.0
    assert stats.fleiss_kappa(one_cat).value is None
    a = stats.krippendorff_alpha(one_cat, "nominal")
    assert a.value is None and a.reason
    single = [["yes", "no", "yes"]]
    for est in (
        stats.percent_agreement(single),
        stats.fleiss_kappa(single),
        stats.krippendorff_alpha(single, "nominal"),
    ):
        assert est.value is None and "two or more" in (est.reason or "")
    assert stats.cohen_kappa(["a", None], [None, "b"]).value is None
    assert stats.pearson([1, 1, 1], [1, 2, 3]).value is None
    assert stats.spearman([1], [2]).value is None
    # no NaN can reach JSON
    for est in (k, a, stats.pearson([1, 1], [2, 3])):
        json.dumps(est.to_dict(), allow_nan=False)


def test_bootstrap_ci_is_seeded_and_brackets_the_value() -> None:
    a, b = _wikipedia_cohen()
    rows = [a, b]
    est1 = stats.with_ci(rows, lambda m: stats.cohen_kappa(m[0], m[1]), resamples=300, seed=7)
    est2 = stats.with_ci(rows, lambda m: stats.cohen_kappa(m[0], m[1]), resamples=300, seed=7)
    assert est1.ci == est2.ci and est1.ci is not None
    assert est1.ci[0] < 0.4 < est1.ci[1]
    assert stats.bootstrap_ci([["x", "y"]], stats.percent_agreement, resamples=50) is None


def test_rank_correlation_of_model_rankings() -> None:
    # ATP Table 8a FS columns for Claude and GPT as judges; Table 8b reports ρ = 0.970
    claude = [67.49, 71.33, 67.69, 53.06, 57.35, 46.41, 47.22, 23.69]
    gemini = [70.24, 78.73, 68.23, 60.35, 63.5, 53.88, 50.14, 29.6]
    gpt = [72.19, 72.42, 74.99, 68.37, 68.37, 62.68, 63.13, 57.03]
    models = [f"m{i}" for i in range(8)]
    m = stats.rank_correlation_matrix(
        {"claude": dict(zip(models, claude)), "gemini": dict(zip(models, gemini)), "gpt": dict(zip(models, gpt))}
    )
    assert m["claude"]["gpt"].value == pytest.approx(0.970, abs=5e-4)
    assert m["claude"]["gemini"].value == pytest.approx(0.952, abs=5e-4)
    assert m["gemini"]["gpt"].value == pytest.approx(0.898, abs=5e-4)


def test_error_correlation_and_effective_judges() -> None:
    ref = {u: 5.0 for u in range(6)}
    base = [1, -1, 2, -2, 0, 1]
    same = {"j1": {u: 5 + e for u, e in enumerate(base)}, "j2": {u: 5 + 2 * e for u, e in enumerate(base)}}
    ec = stats.error_correlation(same, ref, nominal=False)
    assert ec.mean_offdiagonal == pytest.approx(1.0)
    assert ec.effective_judges == pytest.approx(1.0)
    indep = {"j1": {0: 6, 1: 4, 2: 5, 3: 5}, "j2": {0: 5, 1: 5, 2: 6, 3: 4}}
    ec2 = stats.error_correlation(indep, {u: 5 for u in range(4)}, nominal=False)
    assert ec2.mean_offdiagonal == pytest.approx(0.0)
    assert ec2.effective_judges == pytest.approx(2.0)
    nom = stats.error_correlation(
        {"a": {0: "x", 1: "y", 2: "x"}, "b": {0: "x", 1: "y", 2: "y"}}, {0: "x", 1: "x", 2: "x"}, nominal=True
    )
    # errors a=[0,1,0], b=[0,1,1]: r = 0.5
    assert nom.matrix["a"]["b"].value == pytest.approx(0.5)
    json.dumps(nom.to_dict(), allow_nan=False)


def test_vectorised_bootstrap_equals_the_scalar_loop() -> None:
    import random

    rnd = random.Random(3)
    a = [rnd.choice([0, 1, 2]) for _ in range(40)]
    b = [v if rnd.random() < 0.6 else rnd.choice([0, 1, 2]) for v in a]
    for name, scalar in (
        ("percent_agreement", lambda m: stats.percent_agreement(m)),
        ("cohen_kappa", lambda m: stats.cohen_kappa(m[0], m[1], [0, 1, 2], "quadratic")),
        ("pearson", lambda m: stats.pearson(m[0], m[1])),
        ("spearman", lambda m: stats.spearman(m[0], m[1])),
        ("mae", lambda m: stats.mae(m[0], m[1])),
    ):
        kw = {"categories": [0, 1, 2], "weights": "quadratic"} if name == "cohen_kappa" else {}
        fast = stats.pair_bootstrap(a, b, name, resamples=200, seed=5, **kw)
        slow = stats.bootstrap_ci([a, b], scalar, resamples=200, seed=5)
        assert fast == pytest.approx(slow), name
    rows = [KRIPP[0][:11], KRIPP[1][:11], KRIPP[2][:11], KRIPP[3][:11]]  # unit 12 is rated once
    for name, scalar in (
        ("percent_agreement", stats.percent_agreement),
        ("fleiss_kappa", stats.fleiss_kappa),
        ("krippendorff_alpha", lambda m: stats.krippendorff_alpha(m, "interval")),
    ):
        fast = stats.matrix_bootstrap(rows, name, level="interval", resamples=200, seed=5)
        slow = stats.bootstrap_ci(rows, scalar, resamples=200, seed=5)
        assert fast == pytest.approx(slow), name
