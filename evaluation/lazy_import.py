"""Modules imported on first use from worker threads, one import at a time for the whole process.

Tool implementations and the OCR engine are loaded when first needed (a run that never calls a
tool never pays for OpenCV or onnxruntime), and that first need arises on the tool threads, many at
once. Two threads importing overlapping module trees at the same moment can deadlock on the
per-module import locks; Python breaks that by handing one of them the unfinished module, and the
tool fails with an AttributeError on it. Every such import goes through ``load``, so they never
overlap.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

_LOCK = threading.RLock()  # re-entrant: a module being loaded may load another through here


def load(name: str) -> ModuleType:
    """``importlib.import_module(name)``, never beside another ``load`` (cheap once imported)."""
    with _LOCK:
        return importlib.import_module(name)
