"""One profile per benchmark; ``get_profile`` finds one by name or by the benchmark's source format."""

from __future__ import annotations

from evaluation.benchmarks.base import Profile, ScoreContext

_MODULES = ("gta", "agentic_mme", "isg", "vtc", "atp", "native")


class UnknownProfile(LookupError):
    """No profile scores this benchmark."""


def all_profiles() -> list[Profile]:
    import importlib

    return [importlib.import_module(f"evaluation.benchmarks.{m}").PROFILE for m in _MODULES]


def get_profile(name_or_format: str) -> Profile:
    """The first profile (in ``_MODULES`` order) that has this name or format; modules after it are
    not imported (scoring a GTA run does not load the other four scorers)."""
    import importlib

    key = (name_or_format or "").strip().lower().replace("_", "-")
    for m in _MODULES:
        profile = importlib.import_module(f"evaluation.benchmarks.{m}").PROFILE
        if key == profile.name or key in {f.replace("_", "-") for f in profile.formats}:
            return profile
    known = ", ".join(p.name for p in all_profiles())
    raise UnknownProfile(f"no scoring profile for benchmark format {name_or_format!r} (profiles: {known})")


def all_corrections() -> dict[str, dict[str, str]]:
    """profile name -> {correction name: what fixed mode does instead of the reference} (``CORRECTIONS``)."""
    import importlib

    out = {}
    for m in _MODULES:
        module = importlib.import_module(f"evaluation.benchmarks.{m}")
        out[module.PROFILE.name] = dict(getattr(module, "CORRECTIONS", {}) or {})
    return out


__all__ = ["Profile", "all_corrections", "ScoreContext", "UnknownProfile", "all_profiles", "get_profile"]
