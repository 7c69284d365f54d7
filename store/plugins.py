"""Benchmarks as plugins: one descriptor per benchmark, found through the entry-point group
``chainmark.benchmarks``.

A descriptor (``BenchmarkPlugin``) names everything a benchmark brings — its file format, scoring
profile, tool set, report columns, judge templates, demo, guidelines, conformance check and help —
as *dotted paths* (``"package.module:attribute"``), never as imported objects. It lives in the store
(``store.plugin_descriptor``), at the bottom of the layers, so annotation (formats, demo) and evaluation (profiles, tools, reports, judges)
read the same descriptor without importing each other: each layer resolves only the paths it owns,
when it needs them (``resolve``). Reading the descriptors imports nothing but the modules that
define them, which hold strings only.

chainmark's own benchmarks are declared in ``pyproject.toml`` like any other plugin's
(``store.builtin_plugins``); they are also always present when the package metadata is missing (a
checkout run without installing it). Discovery costs a scan of every installed distribution
(importing ``importlib.metadata`` alone is 0.05-0.1 s), so the entry points found are kept in a cache
file stamped with the modification times of the ``sys.path`` folders (installing or removing a
package changes them) and rescanned only when the stamp changes: a command pays a few ``stat`` calls.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from store import speedups
from store.plugin_descriptor import BenchmarkPlugin, PluginError, normal

GROUP = "chainmark.benchmarks"
CACHE_NAME = "benchmark-plugins.json"  # in this package's __pycache__, beside its bytecode
CACHE_ENV = "CHAINMARK_PLUGIN_CACHE"
_CACHE_FORMAT = 2
_CACHE_ENTRIES = 8  # sys.path variants remembered

log = logging.getLogger("chainmark.plugins")

__all__ = [
    "BenchmarkPlugin",
    "PluginError",
    "benchmark_plugins",
    "find_plugin",
    "forget",
    "normal",
    "plugin_names",
    "plugin_problems",
    "rescan",
    "resolve",
    "resource_path",
    "tool_set_names",
]


# ---------------------------------------------------------------------------------------- discovery

_plugins: tuple[BenchmarkPlugin, ...] | None = None
_problems: list[str] = []


def benchmark_plugins() -> tuple[BenchmarkPlugin, ...]:
    """Every benchmark plugin, in listing order (found once per process)."""
    global _plugins
    if _plugins is None:
        _plugins = _discover(_cached_entry_points())
    return _plugins


def plugin_problems() -> list[str]:
    """Plugins that were found and refused, one line each (a broken plugin never stops chainmark)."""
    benchmark_plugins()
    return list(_problems)


def rescan() -> tuple[BenchmarkPlugin, ...]:
    """Forget what was found and scan the installed distributions again (and renew the cache)."""
    global _plugins
    _plugins = _discover(_write_cache(_scan_entry_points()))
    return _plugins


def forget() -> None:
    """Drop what this process found, so the next call looks again (tests that install a plugin)."""
    global _plugins
    _plugins = None


def find_plugin(key: str | None) -> BenchmarkPlugin | None:
    """The plugin with this name or format (compared by ``normal``), or None."""
    for plugin in benchmark_plugins():
        if plugin.answers_to(key or ""):
            return plugin
    return None


def plugin_names() -> list[str]:
    return [p.name for p in benchmark_plugins()]


def tool_set_names() -> list[str]:
    """The tool sets plugins define, in listing order (without importing any of them)."""
    return [p.tool_set for p in benchmark_plugins() if p.tool_set and p.tool_set_builder]


def _discover(entry_points: list[tuple[str, str, str]]) -> tuple[BenchmarkPlugin, ...]:
    """Load the descriptors the entry points name, with the built-ins always there (even when the
    package metadata is missing), and refuse clashes: a name, format or tool set already taken keeps
    its first owner, the built-ins first."""
    from store.builtin_plugins import BUILTINS

    _problems.clear()
    kept: list[BenchmarkPlugin] = list(BUILTINS)
    for ep_name, value, dist in entry_points:
        plugin = _load_entry_point(ep_name, value, dist)
        if plugin is None or any(plugin is b for b in BUILTINS):
            continue
        clash = _clash(plugin, kept)
        if clash:
            _refuse(f"{plugin.name} (from {plugin.source}) ignored: {clash}")
            continue
        kept.append(plugin)
    return tuple(sorted(kept, key=lambda p: (p.order, p.name)))


def _clash(plugin: BenchmarkPlugin, kept: list[BenchmarkPlugin]) -> str | None:
    for other in kept:
        if other.name == plugin.name:
            return f"the name is taken by the plugin from {other.source or 'chainmark'}"
        shared = {normal(f) for f in plugin.formats} & ({normal(f) for f in other.formats} | {other.name})
        if shared:
            return f"format {sorted(shared)[0]!r} belongs to {other.name}"
        if plugin.tool_set_builder and other.tool_set_builder and plugin.tool_set == other.tool_set:
            return f"tool set {plugin.tool_set!r} is defined by {other.name}"
    return None


def _load_entry_point(ep_name: str, value: str, dist: str) -> BenchmarkPlugin | None:
    try:
        found = resolve(value)
    except Exception as exc:  # a broken plugin is reported, never fatal
        _refuse(f"{ep_name} (from {dist}) could not be loaded: {type(exc).__name__}: {exc}")
        return None
    if not isinstance(found, BenchmarkPlugin):
        _refuse(f"{ep_name} (from {dist}): {value} is a {type(found).__name__}, not a BenchmarkPlugin")
        return None
    if found.name != normal(ep_name):
        _refuse(f"{ep_name} (from {dist}): the entry point's name differs from the plugin's ({found.name!r})")
        return None
    if found.source or dist == "chainmark":
        return found
    return _with_source(found, dist)


def _with_source(plugin: BenchmarkPlugin, dist: str) -> BenchmarkPlugin:
    from dataclasses import replace

    return replace(plugin, source=dist)


def _refuse(message: str) -> None:
    _problems.append(message)
    log.warning("benchmark plugin %s", message)


# ------------------------------------------------------------------------------------ resolving paths


def resolve(dotted: str) -> Any:
    """The object a dotted path names: ``"pkg.module"`` is the module, ``"pkg.module:attr.sub"`` an
    attribute of it. Imports happen here, in the layer that asks."""
    module_name, _, attribute = dotted.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found


def resource_path(spec: str) -> Path:
    """The file or folder a ``"package:relative/path"`` names (the package is imported to find it)."""
    package, _, relative = spec.partition(":")
    module = importlib.import_module(package)
    roots = list(getattr(module, "__path__", None) or [])
    base = Path(roots[0]) if roots else Path(str(module.__file__)).parent
    return base / relative


# ------------------------------------------------------------------------------- entry points, cached


def _cache_path() -> Path:
    """``$CHAINMARK_PLUGIN_CACHE`` if set (a read-only install, tests), else beside this package's bytecode."""
    chosen = os.environ.get(CACHE_ENV)
    return Path(chosen) if chosen else Path(__file__).with_name("__pycache__") / CACHE_NAME


def _stamp() -> list[list[Any]]:
    """Each ``sys.path`` entry with its modification time: a package installed or removed there changes it."""
    out: list[list[Any]] = []
    for entry in sys.path:
        try:
            out.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            out.append([entry, None])
    return out


def _cached_entry_points() -> list[tuple[str, str, str]]:
    """The group's entry points as (name, value, distribution): from the cache while its stamp holds.
    The cache keeps one entry per ``sys.path`` (the console script and ``python -m`` see different
    paths), so commands started both ways do not rescan in turn."""
    if not speedups.enabled("plugin_cache"):
        return _scan_entry_points()
    stamp = _stamp()
    for entry in _read_cache():
        if entry.get("stamp") == stamp:
            return [(str(n), str(v), str(d)) for n, v, d in entry["entry_points"]]
    return _write_cache(_scan_entry_points())


def _read_cache() -> list[dict[str, Any]]:
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
        if data["format"] == _CACHE_FORMAT and data["group"] == GROUP:
            return [e for e in data["entries"] if isinstance(e, dict)]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return []


def _scan_entry_points() -> list[tuple[str, str, str]]:
    from importlib.metadata import entry_points

    seen: set[tuple[str, str]] = set()
    out = []
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else "?"
        if (ep.name, ep.value) not in seen:  # a distribution found twice on sys.path counts once
            seen.add((ep.name, ep.value))
            out.append((ep.name, ep.value, dist))
    return out


def _write_cache(found: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Store ``found`` for this ``sys.path``, replacing its older entry; the last few paths are kept."""
    path = _cache_path()
    stamp = _stamp()
    paths = [e for e, _ in stamp]
    others = [e for e in _read_cache() if [p for p, _ in e.get("stamp") or []] != paths]
    entries = [{"stamp": stamp, "entry_points": [list(e) for e in found]}, *others][:_CACHE_ENTRIES]
    data = {"format": _CACHE_FORMAT, "group": GROUP, "entries": entries}
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:  # written whole, then renamed: a process reading it meanwhile sees the old file or the new
        path.parent.mkdir(exist_ok=True)
        temp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temp, path)
    except OSError:  # a read-only install: scan every time
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
    return found
