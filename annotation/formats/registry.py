"""Format name → module. Every format module exposes the same names: ``name``, ``source_format``,
``tool_set``, ``default_benchmark``, ``read(path)``, ``write(bundles, settings, root, read_blob)``,
``read_run(path)`` and ``write_run(run, path, read_blob)``.

A benchmark's format comes from its plugin (``store.plugins``: the descriptor's first format and its
``format_module``). Besides those, chainmark reads and writes layouts that fit any benchmark:
``EXCHANGE_MODULES`` (a Hugging Face datasets folder: tasks) and ``RUN_MODULES`` (Parquet tables,
Inspect AI logs: runs only, exposing ``name``, ``read_run`` and ``write_run``)."""

from __future__ import annotations

import importlib
from types import ModuleType

from store.plugins import benchmark_plugins, normal

EXCHANGE_MODULES = {"hf": "annotation.formats.hf"}
RUN_MODULES = {"parquet": "annotation.formats.run_table", "inspect": "annotation.formats.inspect_log"}
_LAYOUTS = {  # what the layouts that fit any benchmark are, for help texts
    "hf": "a Hugging Face datasets folder of any benchmark's tasks (images embedded)",
    "parquet": "Parquet tables of a run of any benchmark",
    "inspect": "an Inspect AI log of a run of any benchmark",
}


def _plugin_modules() -> dict[str, str]:
    """Each plugin's file format name → its format module, in listing order."""
    return {p.formats[0]: p.format_module for p in benchmark_plugins() if p.format_module}


def format_names() -> tuple[str, ...]:
    """The formats ``import`` and ``export`` take: every plugin's, then the exchange layouts."""
    return (*_plugin_modules(), *EXCHANGE_MODULES)


def run_format_names() -> tuple[str, ...]:
    """The formats ``import-run`` and ``export-run`` take."""
    return (*format_names(), *RUN_MODULES)


def benchmark_formats() -> tuple[str, ...]:
    """The formats a benchmark can be created with: every plugin's (chainmark's own included) and
    the exchange layouts."""
    return (*(p.formats[0] for p in benchmark_plugins() if p.formats), *EXCHANGE_MODULES)


def describe_formats(kind: str = "dataset") -> list[tuple[str, str]]:
    """(format name, one line) for help texts: ``kind`` "dataset" lists what ``import``/``export``
    take, "run" what ``import-run``/``export-run`` take, "benchmark" what a benchmark is created with."""
    plugins = benchmark_plugins()
    if kind == "benchmark":
        rows = [(p.formats[0], p.summary) for p in plugins if p.formats]
        return [*rows, *((name, _LAYOUTS[name]) for name in EXCHANGE_MODULES)]
    rows = [(p.formats[0], p.summary) for p in plugins if p.format_module]
    layouts = [*EXCHANGE_MODULES, *(RUN_MODULES if kind == "run" else ())]
    return [*rows, *((name, _LAYOUTS[name]) for name in layouts)]


def is_run_format(name: str) -> bool:
    """True for a run layout that is not tied to one benchmark's format."""
    return name.strip().lower() in RUN_MODULES


def get_format(name: str) -> ModuleType:
    key = normal(name)
    modules = {**_plugin_modules(), **EXCHANGE_MODULES, **RUN_MODULES}
    if key not in modules:
        raise LookupError(f"unknown format {name!r}; known formats: {', '.join(run_format_names())}")
    return importlib.import_module(modules[key])
