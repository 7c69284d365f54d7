"""Format name → module. Every format module exposes the same names: ``name``, ``source_format``,
``tool_set``, ``default_benchmark``, ``read(path)``, ``write(bundles, settings, root, read_blob)``,
``read_run(path)`` and ``write_run(run, path, read_blob)``.

Run formats (``RUN_MODULES``) are other tools' run layouts that fit any benchmark (Parquet tables,
Inspect AI logs): they expose ``name``, ``read_run`` and ``write_run`` only."""

from __future__ import annotations

import importlib
from types import ModuleType

MODULES = {"gta": "gta", "agentic-mme": "agentic_mme", "isg": "isg", "vtc": "vtc", "atp": "atp", "hf": "hf"}
FORMAT_NAMES = tuple(MODULES)
RUN_MODULES = {"parquet": "run_table", "inspect": "inspect_log"}
RUN_FORMAT_NAMES = (*FORMAT_NAMES, *RUN_MODULES)


def is_run_format(name: str) -> bool:
    """True for a run layout that is not tied to one benchmark's format."""
    return name.strip().lower() in RUN_MODULES


def get_format(name: str) -> ModuleType:
    key = name.strip().lower().replace("_", "-")
    if key in RUN_MODULES:
        return importlib.import_module(f"annotation.formats.{RUN_MODULES[key]}")
    if key not in MODULES:
        raise LookupError(f"unknown format {name!r}; known formats: {', '.join(RUN_FORMAT_NAMES)}")
    return importlib.import_module(f"annotation.formats.{MODULES[key]}")
