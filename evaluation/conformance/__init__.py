"""Conformance: run a benchmark's own reference evaluator (from the user's checkout, in its own Python) on
an exported run and diff its numbers against chainmark's, metric by metric and item by item."""

from evaluation.conformance.runner import (
    ConformanceReport,
    ItemDiff,
    MetricDiff,
    ReferenceError_,
    compare,
    ours_view,
    run_conformance,
    run_driver,
)

__all__ = [
    "ConformanceReport",
    "ItemDiff",
    "MetricDiff",
    "ReferenceError_",
    "compare",
    "ours_view",
    "run_conformance",
    "run_driver",
]
