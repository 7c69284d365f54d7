"""Record ppi-python's answers on the equality test's inputs, so the suite checks chainmark's estimates
against the library's own numbers where the library (with numba, scipy, statsmodels…) is not installed.

Run in a Python that has ``ppi_python``: ``python bench/record_ppi_values.py`` (from the repository root);
it rewrites ``tests/review/data/ppi_python_values.json``. ``tests/review/test_ppi.py`` builds the same
inputs from the same seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.review.test_ppi import ALPHAS, CASES, LAMBDAS  # noqa: E402


def main() -> None:
    import ppi_py  # type: ignore[import-not-found]

    cases: dict[str, list[dict[str, Any]]] = {}
    out = {"ppi_python": _version(), "cases": cases}
    for name, make in CASES:
        y, yh, yu = make(np.random.default_rng(7))
        rows: list[dict[str, Any]] = []
        for alpha in ALPHAS:
            for lam in LAMBDAS:
                point = ppi_py.ppi_mean_pointestimate(y, yh, yu, lam=lam)
                low, high = ppi_py.ppi_mean_ci(y, yh, yu, alpha=alpha, lam=lam)
                rows.append(
                    {
                        "alpha": alpha,
                        "lam": lam,
                        "estimate": float(np.squeeze(point)),
                        "low": float(np.squeeze(low)),
                        "high": float(np.squeeze(high)),
                    }
                )
            c_low, c_high = ppi_py.classical_mean_ci(y, alpha=alpha)
            rows.append({"alpha": alpha, "classical": [float(c_low), float(c_high)]})
        cases[name] = rows
    path = ROOT / "tests" / "review" / "data" / "ppi_python_values.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{sum(len(r) for r in cases.values())} values from ppi-python {out['ppi_python']} -> {path}")


def _version() -> str:
    from importlib.metadata import version

    return version("ppi_python")


if __name__ == "__main__":
    main()
