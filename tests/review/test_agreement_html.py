"""The agreement page's heatmaps: the right statistic per scale level, every pair in both cells, the
judges' rank correlation when there is one, and data escaped."""

from __future__ import annotations

from evaluation.agreement.html_section import page, pair_matrix


def _est(value: float | None) -> dict:
    return {"value": value, "ci": None, "n": 5, "reason": None}


def _report(level: str) -> dict:
    return {
        "scale": "quality",
        "dimension": "",
        "level": level,
        "raters": ["ann", "bob", "judge:<x>"],
        "units": 5,
        "overall": {"percent_agreement": _est(0.8)},
        "notes": ["a <note>"],
        "pairs": [
            {
                "a": "ann",
                "b": "bob",
                "kind": "human-human",
                "n": 5,
                "statistics": {"cohen_kappa": _est(0.5), "cohen_kappa_quadratic": _est(0.7)},
            },
            {
                "a": "ann",
                "b": "judge:<x>",
                "kind": "human-judge",
                "n": 5,
                "statistics": {"cohen_kappa": _est(-0.2), "cohen_kappa_quadratic": _est(None)},
            },
        ],
        "model_ranking": {
            "spearman": {"j1": {"j1": _est(1.0), "j2": _est(0.4)}, "j2": {"j1": _est(0.4), "j2": _est(1.0)}},
            "reason": None,
        },
    }


def test_the_statistic_follows_the_level_and_pairs_fill_both_cells() -> None:
    statistic, raters, grid = pair_matrix(_report("nominal"))  # type: ignore[misc]
    assert statistic == "cohen_kappa" and raters == ["ann", "bob", "judge:<x>"]
    assert grid == [[1.0, 0.5, -0.2], [0.5, 1.0, None], [-0.2, None, 1.0]]
    statistic, _, grid = pair_matrix(_report("ordinal"))  # type: ignore[misc]
    assert statistic == "cohen_kappa_quadratic" and grid[0][2] is None


def test_page_has_both_heatmaps_and_escapes_data() -> None:
    html = page([_report("ordinal")])
    assert "quality: pairwise cohen_kappa_quadratic</figcaption>" in html
    assert "quality: inter-judge Spearman of model rankings</figcaption>" in html
    assert html.count("data:image/svg+xml;base64,") == 2
    assert "a &lt;note&gt;" in html and "<note>" not in html
    assert "No ratings to compare yet." in page([])
