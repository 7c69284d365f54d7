"""Format name → module. Every format module exposes the same names: ``name``, ``source_format``,
``tool_set``, ``default_benchmark``, ``read(path)``, ``write(bundles, settings, root, read_blob)``,
``read_run(path)`` and ``write_run(run, path, read_blob)``."""

from __future__ import annotations

import importlib
from types import ModuleType

MODULES = {"gta": "gta", "agentic-mme": "agentic_mme", "isg": "isg", "vtc": "vtc", "atp": "atp"}
FORMAT_NAMES = tuple(MODULES)


def get_format(name: str) -> ModuleType:
    key = name.strip().lower().replace("_", "-")
    if key not in MODULES:
        raise LookupError(f"unknown format {name!r}; known formats: {', '.join(FORMAT_NAMES)}")
    return importlib.import_module(f"annotation.formats.{MODULES[key]}")
