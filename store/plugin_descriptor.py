"""What a benchmark plugin is: ``BenchmarkPlugin``, a descriptor of names and dotted paths (see
``store.plugins`` for how plugins are found and ``docs/plugins.md`` for how to write one)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_][\w.]*)?$")
_RESOURCE = re.compile(r"^[A-Za-z_][\w.]*:[^:]+$")


class PluginError(ValueError):
    """A descriptor that cannot be used; the message names the plugin and what is wrong."""


@dataclass(frozen=True)
class BenchmarkPlugin:
    """Everything chainmark needs to know about one benchmark, as names and dotted paths.

    Paths are ``"module"`` or ``"module:attribute"``; resources (``judge_templates``, ``guidelines``)
    are ``"package:relative/path"`` inside an importable package. Every field but ``name`` and
    ``summary`` may be left empty: a benchmark without a profile cannot be scored, one without a
    format module cannot be imported or exported, and so on; the commands say so.
    """

    name: str  # lowercase, digits and dashes: "gta"
    summary: str  # one line, for help texts and listings
    formats: tuple[str, ...] = ()  # its file format's name first, then names stored benchmarks may carry
    format_module: str | None = None  # read/write module of annotation's format contract
    profile: str | None = None  # "module:PROFILE": evaluation's scoring profile
    tool_set: str | None = None  # the tool set its chains use (defined here or by another plugin)
    tool_set_builder: str | None = None  # "module:build" when this plugin defines ``tool_set``
    metrics: tuple[str, ...] = ()  # report headline columns, in order (empty: every scalar metric)
    category_metric: str | None = None  # the metric of the per-category table (None: no such table)
    judge_templates: str | None = None  # "package:folder" holding <judge>.v<N>.md prompt templates
    demo: str | None = None  # "module:function" filling the demo benchmark through a DemoBuilder
    demo_description: str = ""  # the demo benchmark's description
    demo_tool_set: str | None = None  # the demo benchmark's tool set when ``tool_set`` is empty (a native one picks)
    demo_rubric: str | None = None  # "package:file.md": a judge rubric stored as the demo benchmark's first version
    guidelines: str | None = None  # "package:file.md": authoring guidelines a new benchmark starts with
    conformance: str | None = None  # module defining reference_conformance (and conformance_ours)
    help: str = ""  # a paragraph: what the benchmark is, where its data comes from
    order: int = 100  # listing order (chainmark's own: below 100); ties by name
    source: str = field(default="", compare=False)  # the distribution that declared it (set on discovery)

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise PluginError(f"benchmark plugin {self.name!r}: {'; '.join(problems)}")

    def problems(self) -> list[str]:
        """What makes this descriptor unusable (empty when it is fine)."""
        out = []
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            out.append("the name must be lowercase letters, digits and dashes")
        if not self.summary.strip():
            out.append("a one-line summary is required")
        if not isinstance(self.formats, tuple) or not all(isinstance(f, str) and f for f in self.formats):
            out.append("formats must be a tuple of non-empty names")
        if not isinstance(self.metrics, tuple):
            out.append("metrics must be a tuple of names")
        if self.category_metric and self.metrics and self.category_metric not in self.metrics:
            out.append(f"category_metric {self.category_metric!r} is not one of its metrics")
        if self.tool_set_builder and not self.tool_set:
            out.append("tool_set_builder needs tool_set (the name of the set it builds)")
        if (self.format_module or self.demo) and not self.formats:
            out.append("a format module or demo needs at least one format name")
        for label in ("format_module", "profile", "tool_set_builder", "demo", "conformance"):
            value = getattr(self, label)
            if value is not None and not _DOTTED.match(value):
                out.append(f"{label} {value!r} is not a dotted path (module or module:attribute)")
        for label in ("judge_templates", "guidelines", "demo_rubric"):
            value = getattr(self, label)
            if value is not None and not _RESOURCE.match(value):
                out.append(f"{label} {value!r} is not a resource path (package:relative/path)")
        return out

    @property
    def file_format(self) -> str | None:
        """The format name ``import``/``export`` take for it (its first format)."""
        return self.formats[0] if self.formats else None

    def answers_to(self, key: str) -> bool:
        """True when ``key`` (a benchmark name or a stored source format) is this benchmark."""
        wanted = normal(key)
        return wanted == self.name or wanted in {normal(f) for f in self.formats}


def normal(name: str | None) -> str:
    """A benchmark or format name as compared: trimmed, lowercase, dashes for underscores."""
    return (name or "").strip().lower().replace("_", "-")
