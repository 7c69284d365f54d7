"""One profile per benchmark, named by its plugin (``store.plugins``: the descriptor's ``profile``);
``get_profile`` finds one by the benchmark's name or source format."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation.benchmarks.base import Profile, ScoreContext

if TYPE_CHECKING:
    from store.plugin_descriptor import BenchmarkPlugin


class UnknownProfile(LookupError):
    """No profile scores this benchmark."""


def _scored() -> list[BenchmarkPlugin]:
    """The plugins that bring a scoring profile, in listing order."""
    from store.plugins import benchmark_plugins

    return [p for p in benchmark_plugins() if p.profile]


def _load(plugin: BenchmarkPlugin) -> Profile:
    from store.plugins import resolve

    profile: Profile = resolve(str(plugin.profile))
    return profile


def all_profiles() -> list[Profile]:
    return [_load(p) for p in _scored()]


def get_profile(name_or_format: str) -> Profile:
    """The profile of the plugin with this name or format; no other profile module is imported
    (scoring a GTA run does not load the other scorers)."""
    for plugin in _scored():
        if plugin.answers_to(name_or_format):
            return _load(plugin)
    known = ", ".join(p.name for p in _scored())
    raise UnknownProfile(f"no scoring profile for benchmark format {name_or_format!r} (profiles: {known})")


def all_corrections() -> dict[str, dict[str, str]]:
    """profile name -> {correction name: what fixed mode does instead of the reference} (``CORRECTIONS``
    of the profile's module)."""
    import importlib

    out = {}
    for profile in all_profiles():
        module = importlib.import_module(type(profile).__module__)
        out[profile.name] = dict(getattr(module, "CORRECTIONS", {}) or {})
    return out


__all__ = ["Profile", "all_corrections", "ScoreContext", "UnknownProfile", "all_profiles", "get_profile"]
