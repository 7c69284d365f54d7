"""Compare chainmark's scores of a run with the reference evaluator's scores of the same exported files.

The contract a benchmark's conformance module (its plugin's ``conformance``, e.g. ``evaluation/benchmarks/<b>.py``)
offers:

- ``reference_conformance(export_dir, reference, python) -> dict`` (required): run the reference evaluator
  from the user's checkout ``reference`` as a subprocess with interpreter ``python`` on the files in
  ``export_dir`` and return ``{"metrics": {name: value}, "items": {item_id: {metric: value}}}``. It may add
  ``"tolerances": {metric: abs_tol}`` (embedding-based values: ``EMBEDDER_TOLERANCE``) and ``"notes": [str]``.
  ``export_dir`` holds the run export (``export-run``); ``chainmark conformance`` puts the dataset export
  (``export``) next to it, in ``export_dir.parent / "dataset"``, for a reference that needs the tasks too.
  A failure to run the reference is raised as ``OSError``/``RuntimeError`` with a message saying why.
- ``conformance_ours(score_result) -> dict`` (optional): chainmark's own score result (what ``score_run``
  returns, ``per_item`` included) in the same shape. Without it, ``ours_view`` takes the scalar metrics and
  the ``per_item`` rows that carry an ``item_id``.

Only names the reference reports are compared: a metric or item the reference has and chainmark lacks is
a difference (``ours`` None); values chainmark computes beyond the reference are not compared.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluation.scoring.results import ScoreResult

EMBEDDER_TOLERANCE = 1e-4  # values computed from sentence embeddings (another embedder, same formula)
EXACT_TOLERANCE = 1e-9  # everything else: equal up to float summation order
EMBEDDER_ENV = "CHAINMARK_CONFORMANCE_EMBEDDER"
RESULT_MARK = "CHAINMARK-CONFORMANCE-RESULT "  # drivers print one line starting with this, then JSON


class ReferenceError_(RuntimeError):
    """The reference evaluator could not be run or its output not read; the message says why."""


@dataclass
class MetricDiff:
    name: str
    ours: Any
    reference: Any
    equal: bool


@dataclass
class ItemDiff:
    item_id: str
    metric: str
    ours: Any
    reference: Any


@dataclass
class ConformanceReport:
    benchmark: str
    metrics: list[MetricDiff] = field(default_factory=list)
    items: list[ItemDiff] = field(default_factory=list)  # differing item values only
    items_compared: int = 0  # item × metric values compared
    items_equal: int = 0
    per_metric_items: dict[str, dict[str, int]] = field(default_factory=dict)  # metric -> {"equal": n, "different": n}
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(m.equal for m in self.metrics) and not self.items

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ok"] = self.ok
        return out


def _conformance_module(benchmark: str) -> Any:
    """The module its benchmark plugin names for conformance (``store.plugins``), or None."""
    from store.plugins import find_plugin, resolve

    plugin = find_plugin(benchmark)
    if plugin is None:
        from evaluation.benchmarks import get_profile

        get_profile(benchmark)  # raises UnknownProfile, naming the profiles there are
    return resolve(plugin.conformance) if plugin is not None and plugin.conformance else None


def reference_is_judged(benchmark: str) -> bool:
    """False when the benchmark's reference is run with no judge (its conformance module says
    ``REFERENCE_IS_JUDGED = False``): chainmark's side must then be scored without the run's verdicts."""
    return bool(getattr(_conformance_module(benchmark), "REFERENCE_IS_JUDGED", True))


def default_python() -> str:
    """The interpreter for the reference: $CHAINMARK_REFERENCE_PYTHON, else chainmark's own."""
    return os.environ.get("CHAINMARK_REFERENCE_PYTHON") or sys.executable


def equal_values(a: Any, b: Any, tol: float) -> bool:
    """Equal within ``tol`` for numbers (bools count as 0/1), recursively for lists and dicts, else ==."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return abs(fa - fb) <= tol
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal_values(a[k], b[k], tol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal_values(x, y, tol) for x, y in zip(a, b))
    return a == b


def ours_view(benchmark: str, score_result: ScoreResult) -> dict[str, Any]:
    """chainmark's score result in the conformance shape (the profile's ``conformance_ours`` if it has one)."""
    module = _conformance_module(benchmark)
    hook = getattr(module, "conformance_ours", None)
    if hook is not None:
        return hook(score_result)
    metrics = {k: v for k, v in score_result.metrics.items() if not isinstance(v, (dict, list))}
    items: dict[str, dict[str, Any]] = {}
    for row in score_result.per_item:
        if isinstance(row, dict) and row.get("item_id") is not None:
            items[str(row["item_id"])] = {k: v for k, v in row.items() if k != "item_id"}
    return {"metrics": metrics, "items": items}


def compare(benchmark: str, ours: dict[str, Any], reference: dict[str, Any]) -> ConformanceReport:
    """Per-metric and per-item diff; tolerances come from the reference answer (default exact)."""
    tolerances = dict(reference.get("tolerances") or {})
    report = ConformanceReport(benchmark, notes=[*(ours.get("notes") or []), *(reference.get("notes") or [])])
    our_metrics = ours.get("metrics") or {}
    for name, ref_value in (reference.get("metrics") or {}).items():
        tol = float(tolerances.get(name, EXACT_TOLERANCE))
        mine = our_metrics.get(name)
        report.metrics.append(MetricDiff(name, mine, ref_value, equal_values(mine, ref_value, tol)))
    our_items = ours.get("items") or {}
    for item_id, ref_row in (reference.get("items") or {}).items():
        mine_row = our_items.get(str(item_id)) or {}
        for metric, ref_value in (ref_row or {}).items():
            tol = float(tolerances.get(metric, EXACT_TOLERANCE))
            mine = mine_row.get(metric)
            counts = report.per_metric_items.setdefault(metric, {"equal": 0, "different": 0})
            report.items_compared += 1
            if equal_values(mine, ref_value, tol):
                report.items_equal += 1
                counts["equal"] += 1
            else:
                counts["different"] += 1
                report.items.append(ItemDiff(str(item_id), metric, mine, ref_value))
    missing = sorted(set(map(str, our_items)) - set(map(str, reference.get("items") or {})))
    if missing and reference.get("items"):
        report.notes.append(
            f"{len(missing)} item(s) scored by chainmark have no reference value: "
            f"{', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}"
        )
    return report


def run_conformance(
    benchmark: str,
    export_dir: Path,
    reference: Path,
    python: str | None = None,
    *,
    ours: dict[str, Any] | None = None,
    embedder: str | None = None,
) -> ConformanceReport:
    """Run ``benchmark``'s reference evaluator on ``export_dir`` and diff it against ``ours``.

    ``embedder`` (the name chainmark scored with) is handed to the reference through ``$CHAINMARK_CONFORMANCE_EMBEDDER``
    (``EMBEDDER_ENV``) so an embedding-based reference can be run with the same embedder injected.
    ``ours`` is chainmark's side in the conformance shape (``ours_view`` of a score result); without it the
    file ``export_dir/../chainmark-scores.json`` written by ``chainmark conformance`` is read.
    """
    module = _conformance_module(benchmark)
    hook = getattr(module, "reference_conformance", None)
    if hook is None:
        raise LookupError(
            f"benchmark {benchmark!r} has no conformance check (its plugin names no module with reference_conformance)"
        )
    reference = Path(reference).expanduser()
    if not reference.is_dir():
        raise FileNotFoundError(f"reference checkout not found: {reference}")
    if ours is None:
        saved = Path(export_dir).parent / "chainmark-scores.json"
        if not saved.exists():
            raise FileNotFoundError(f"no chainmark scores given and none saved at {saved}")
        ours = json.loads(saved.read_text(encoding="utf-8"))
    previous = os.environ.get(EMBEDDER_ENV)
    if embedder:
        os.environ[EMBEDDER_ENV] = embedder
    try:
        ref = hook(Path(export_dir), reference, python or default_python())
    finally:
        if embedder:
            if previous is None:
                os.environ.pop(EMBEDDER_ENV, None)
            else:
                os.environ[EMBEDDER_ENV] = previous
    return compare(benchmark, ours, ref)


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_PIP_NAMES = {"sklearn": "scikit-learn", "PIL": "pillow", "cv2": "opencv-python", "yaml": "pyyaml"}


def missing_package(python: str, module: str) -> str:
    """One line for a reference Python without a package the reference imports: what to install, where."""
    top = module.split(".")[0]
    package = _PIP_NAMES.get(top, top.replace("_", "-"))
    return (
        f"the reference's Python ({python}) has no module {top!r}: install it there "
        f"(`{python} -m pip install {package}`), or pass --python (or set $CHAINMARK_REFERENCE_PYTHON) "
        "naming a Python that has it"
    )


def run_driver(
    python: str,
    driver: Path,
    args: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = 3600,
) -> dict[str, Any]:
    """Run a driver script (ours, in ``drivers/``) with the reference's Python; return its result JSON.

    The driver prints ``RESULT_MARK`` + JSON on one line of stdout; anything else it (or the reference
    code) prints is ignored. A non-zero exit or a missing result line raises ``ReferenceError_`` with the
    tail of stderr. ``CHAINMARK_ROOT`` tells the driver where chainmark lives (for an injected embedder).
    """
    full_env = dict(os.environ)
    full_env["CHAINMARK_ROOT"] = str(Path(__file__).resolve().parents[2])
    full_env.setdefault("PYTHONIOENCODING", "utf-8")
    if env:
        full_env.update(env)
    try:
        proc = subprocess.run(
            [python, str(driver), *args],
            cwd=str(cwd) if cwd else None,
            env=full_env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
        )
    except FileNotFoundError as exc:
        raise ReferenceError_(f"cannot start the reference's Python {python!r}: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise ReferenceError_(f"the reference evaluator did not finish within {timeout:.0f} s") from exc
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK) :])
    missing = _MISSING_MODULE.findall(proc.stderr)
    if missing:
        raise ReferenceError_(missing_package(python, missing[-1]))
    tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
    raise ReferenceError_(
        f"the reference evaluator ({driver.name}) exited with {proc.returncode} and no result:\n{tail}"
    )


DRIVERS = Path(__file__).with_name("drivers")
