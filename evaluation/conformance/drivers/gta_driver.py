"""Run OpenCompass's GTA evaluator (``opencompass/datasets/gta_bench.py`` from the user's GTA checkout) on an
exported dataset + predictions file, and print its numbers and per-item contributions as one JSON line.

Runs in the reference's Python as a script. Only the evaluator module is loaded from the checkout; the
framework around it (registry, ``BaseDataset``/``BaseEvaluator`` bases, HF ``datasets``) is replaced by
minimal stand-ins, and the OpenCompass plumbing that feeds the evaluator is restated here: predictions
are read as ``preds[str(i)] for i in range(len(preds))`` and zipped by position with the dataset's
``gt_answer`` column; ``gold`` comes from the predictions file. With ``--embedder NAME`` (not
``reference``) ``sentence_transformers`` is replaced by chainmark's embedder NAME, so SBERT-based values
match chainmark's within float tolerance rather than the paper model's.

Per-item values are observed, not recomputed: a trace function snapshots the evaluator's own counters
each time its loop moves to the next sample; the differences are the sample's contributions.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

RESULT_MARK = "CHAINMARK-CONFORMANCE-RESULT "
MODULE_PATHS = ("opencompass/opencompass/datasets/gta_bench.py", "opencompass/datasets/gta_bench.py")


def _module(name: str, **attrs: object) -> types.ModuleType:
    """A stand-in module. It carries a spec: libraries the real sentence-transformers loads ask
    ``importlib.util.find_spec`` about optional packages (``datasets``), which raises on a spec of None."""
    mod = sys.modules.get(name)
    if mod is None:
        mod = types.ModuleType(name)
        mod.__spec__ = importlib.machinery.ModuleSpec(name, loader=None)
    for k, v in attrs.items():
        setattr(mod, k, v)
    sys.modules[name] = mod
    return mod


class _Registry:
    def register_module(self, *args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda cls: cls


class _Dataset:
    """The slice of ``datasets.Dataset`` the loader and the plumbing use: from_list and column access."""

    def __init__(self, rows):
        self.rows = list(rows)

    @classmethod
    def from_list(cls, rows):
        return cls(rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, key):
        if isinstance(key, str):
            return [r[key] for r in self.rows]
        return self.rows[key]


def install_framework_stand_ins(embedder: str) -> None:
    """Empty modules for the OpenCompass framework imports around the evaluator (registries, the dataset
    base class), so the evaluator file itself loads from the user's checkout and computes every number."""
    _module("datasets")
    _module("datasets.arrow_dataset", Dataset=_Dataset)
    _module("opencompass")
    _module("opencompass.registry", ICL_EVALUATORS=_Registry(), LOAD_DATASET=_Registry())
    _module("opencompass.openicl")
    _module("opencompass.openicl.icl_evaluator", BaseEvaluator=type("BaseEvaluator", (), {}))
    pkg = _module("opencompass.datasets")
    pkg.__path__ = []  # a package, so ``from .base import BaseDataset`` resolves
    _module("opencompass.datasets.base", BaseDataset=type("BaseDataset", (), {}))
    if embedder != "reference":
        sys.path.insert(0, os.environ["CHAINMARK_ROOT"])
        from evaluation.scoring.embedding import get_embedder
        import numpy as np

        chosen = get_embedder(embedder)

        class SentenceTransformer:
            def __init__(self, *_a, **_k):
                self.embedder = chosen

            def encode(self, text, convert_to_tensor=False):
                return np.asarray(chosen.encode([text])[0], dtype=np.float64)

        class _Tensor:  # what ``util.cos_sim(...).cpu().numpy()`` needs
            def __init__(self, value):
                self.value = value

            def cpu(self):
                return self

            def numpy(self):
                return self.value

        def cos_sim(a, b):
            a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
            return _Tensor(np.array([[float(a @ b / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))]]))

        _module(
            "sentence_transformers",
            SentenceTransformer=SentenceTransformer,
            util=types.SimpleNamespace(cos_sim=cos_sim),
        )


def load_evaluator_module(reference: Path) -> types.ModuleType:
    for rel in MODULE_PATHS:
        path = reference / rel
        if path.is_file():
            spec = importlib.util.spec_from_file_location("opencompass.datasets.gta_bench", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
            return mod
    raise SystemExit(f"gta_bench.py not found under {reference} (looked for {', '.join(MODULE_PATHS)})")


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


class CounterTrace:
    """Snapshots the evaluator's ``metrics`` and ``total`` dicts whenever its loop starts a new sample."""

    def __init__(self, code):
        self.code = code
        self.snapshots: list[dict] = []
        self._last = object()

    def _snap(self, frame) -> None:
        f = frame.f_locals
        snap = {}
        for name in ("metrics", "total", "total_predict"):
            if isinstance(f.get(name), dict):
                snap.update({f"{name}.{k}": float(_plain(v)) for k, v in f[name].items()})
        self.snapshots.append(snap)

    def local(self, frame, event, arg):
        if event == "line":
            current = frame.f_locals.get("preds")
            if current is not None and current is not self._last:
                self._last = current
                self._snap(frame)
        elif event == "return":
            self._snap(frame)
        return self.local

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code is self.code:
            return self.local
        return None

    def deltas(self) -> list[dict]:
        out = []
        for a, b in zip(self.snapshots, self.snapshots[1:]):
            out.append({k: b[k] - a.get(k, 0.0) for k in b})
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, type=Path)
    ap.add_argument("--dataset", required=True, type=Path, help="folder with dataset.json (as exported)")
    ap.add_argument("--predictions", required=True, type=Path, help="gta_bench.json")
    ap.add_argument("--embedder", default=os.environ.get("CHAINMARK_CONFORMANCE_EMBEDDER") or "reference")
    args = ap.parse_args()
    install_framework_stand_ins(args.embedder)
    mod = load_evaluator_module(args.reference.resolve())

    test_set = mod.GTABenchDataset.load(str(args.dataset))
    with open(args.predictions, encoding="utf-8") as fh:
        raw = json.load(fh)
    keys = [str(i) for i in range(len(raw))]
    preds = [raw[k] for k in keys]
    columns = {k: [p.get(k) for p in preds] for k in preds[0]} if preds else {}
    predictions = columns.pop("prediction", None) or []
    layout = (
        "e2e"
        if predictions and isinstance(predictions[0], list) and predictions[0] and isinstance(predictions[0][0], list)
        else "step"
    )
    mode = "every" if layout == "e2e" else "every_with_gt"
    gold = columns.get("gold") or [None] * len(predictions)
    references = test_set["gt_answer"]

    evaluator = mod.GTABenchEvaluator(mode)
    trace = CounterTrace(type(evaluator).score.__code__)
    sys.settrace(trace)
    try:
        metrics = evaluator.score(predictions, references, gold)
        error = None
    except Exception as exc:  # the reference's own failure is a result too
        metrics, error = {}, f"{type(exc).__name__}: {exc}"
    finally:
        sys.settrace(None)
    items = {}
    for key, delta in zip(keys, trace.deltas()):
        items[key] = delta
    print(
        RESULT_MARK
        + json.dumps(
            {
                "mode": mode,
                "metrics": _plain(metrics),
                "items": items,
                "error": error,
                "embedder": args.embedder,
                "n_references": len(references),
            }
        )
    )


if __name__ == "__main__":
    main()
