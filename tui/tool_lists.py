"""The tools a task can be offered: its benchmark's tool set's tools, read from the tool-set registry.

What ``chainmark tasks add/edit --tool`` checks, what the task editor's tool checklist shows and what the
chain builder's palette lists, in one place. It needs the tool sets (evaluation) and the authoring rules
(annotation), so it lives above both, without Textual.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from annotation.tasks import AuthoringError, tool_list

if TYPE_CHECKING:
    from store.models import Benchmark


def benchmark_tool_set(tool_set: str | None, source_format: str) -> str:
    """The tool set a benchmark's chains use: its own, else the one its format's plugin names, else the
    first there is (a benchmark made without one still gets tools to build chains with)."""
    from evaluation.tools import tool_set_names
    from store.plugins import find_plugin

    if tool_set:
        return tool_set
    names = tool_set_names()
    plugin = find_plugin(source_format)
    if plugin is not None and plugin.tool_set and plugin.tool_set in names:
        return plugin.tool_set
    return names[0]


def tools_of_set(tool_set: str) -> list[str]:
    """The tools a model can be offered from ``tool_set`` (its extras are never offered), or none when no
    installed plugin defines it any more."""
    from evaluation.tools import UnknownToolSet, get_tool_set

    try:
        return get_tool_set(tool_set).names()
    except UnknownToolSet:
        return []


def tool_descriptions(tool_set: str | None, source_format: str) -> dict[str, dict[str, Any]]:
    """What an export may say about each tool of a benchmark's tool set (name, description, JSON-schema
    parameters and the set's own metadata, e.g. GTA's input/output metas): format writers that describe
    tools in their files (GTA's ``toolmeta.json``) use it where the benchmark's imported data says nothing."""
    from evaluation.tools import UnknownToolSet, get_tool_set

    try:
        tools = get_tool_set(benchmark_tool_set(tool_set, source_format)).all_tools()
    except UnknownToolSet:
        return {}
    return {
        t.name: {"name": t.name, "description": t.description, "parameters": t.parameters, "meta": dict(t.meta)}
        for t in tools
    }


def checked_tools(benchmark: str, tool_set: str, names: Iterable[str]) -> list[str]:
    """``names`` as a task's tool list, each one a tool of the benchmark's tool set; else why not, in words."""
    wanted = tool_list(list(names))
    if not wanted:
        return []
    known = tools_of_set(tool_set)
    if not known:
        raise AuthoringError(f"benchmark {benchmark!r}: tool set {tool_set!r} is not installed, so it offers no tools")
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise AuthoringError(
            f"tool set {tool_set!r} of benchmark {benchmark!r} has no tool {', '.join(map(repr, unknown))}; "
            f"its tools: {', '.join(known)}"
        )
    return wanted


def benchmark_tools(bench: Benchmark, names: Iterable[str]) -> list[str]:
    """``names`` checked against ``bench``'s tool set (``checked_tools``), for a task of that benchmark."""
    return checked_tools(bench.name, benchmark_tool_set(bench.tool_set, bench.source_format), names)
