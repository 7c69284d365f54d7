"""The tools a task can be offered: its benchmark's tool set's tools, read from the tool-set registry.

What ``chainmark tasks add/edit --tool`` checks and what the task forms' tool lists show, in one place.
It needs the tool sets (evaluation) and the authoring rules (annotation), so it lives above both,
without Textual.
"""

from __future__ import annotations

from collections.abc import Iterable

from annotation.tasks import AuthoringError, tool_list


def tools_of_set(tool_set: str | None) -> list[str]:
    """The tools a model can be offered from ``tool_set`` (its extras are never offered), or none."""
    if not tool_set:
        return []
    from evaluation.tools import UnknownToolSet, get_tool_set

    try:
        return get_tool_set(tool_set).names()
    except UnknownToolSet:  # a benchmark stored with a set no installed plugin defines any more
        return []


def checked_tools(benchmark: str, tool_set: str | None, names: Iterable[str]) -> list[str]:
    """``names`` as a task's tool list, each one a tool of the benchmark's tool set; else why not, in words."""
    wanted = tool_list(list(names))
    if not wanted:
        return []
    known = tools_of_set(tool_set)
    if not known:
        raise AuthoringError(
            f"benchmark {benchmark!r} has no tool set with tools to offer"
            + (f" ({tool_set!r} is not installed)" if tool_set else "")
        )
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise AuthoringError(
            f"tool set {tool_set!r} has no tool {', '.join(map(repr, unknown))}; its tools: {', '.join(known)}"
        )
    return wanted
