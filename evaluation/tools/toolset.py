"""Tools and named, versioned tool sets as values: what a tool set module builds and the registry
serves. Kept apart from the registry so the tool set modules depend on this alone (no cycle)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluation.lazy_import import load
from evaluation.tools.result import ToolContext, ToolOutput

Impl = Callable[[dict[str, Any], ToolContext], ToolOutput]

KINDS = ("offline", "service", "plan")


@dataclass(frozen=True)
class Tool:
    """One callable tool: the schema a model sees plus the implementation that really runs it."""

    name: str
    description: str
    parameters: dict[str, Any]
    category: str
    kind: str
    impl: Impl | str | None = field(default=None, compare=False, repr=False)  # callable or "module:function"
    meta: dict[str, Any] = field(default_factory=dict, compare=False)  # e.g. GTA inputs/outputs, VTC op

    def implementation(self) -> Impl | None:
        """The callable; a "module:function" string is imported on first use (keeps imports light)."""
        if isinstance(self.impl, str):
            module, _, func = self.impl.partition(":")
            return getattr(load(module), func)  # first use is on a tool thread: one import at a time
        return self.impl

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class UnknownToolSet(KeyError):
    """No tool set of that name; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would print the repr of its argument
        return str(self.args[0])


class UnknownTool(LookupError):
    """The tool set has no tool of that name."""


@dataclass
class ToolSet:
    """A named, versioned, ordered set of tools. ``extras`` run but are not offered by default."""

    name: str
    version: str
    description: str
    tools: dict[str, Tool]
    extras: dict[str, Tool] = field(default_factory=dict)

    def names(self, include_extras: bool = False) -> list[str]:
        return list(self.tools) + (list(self.extras) if include_extras else [])

    def all_tools(self, include_extras: bool = False) -> list[Tool]:
        return list(self.tools.values()) + (list(self.extras.values()) if include_extras else [])

    def get(self, name: str) -> Tool:
        tool = self.tools.get(name) or self.extras.get(name)
        if tool is None:
            raise UnknownTool(f"tool set {self.name!r} has no tool {name!r}; known: {', '.join(self.names(True))}")
        return tool

    def openai_tools(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI ``tools=`` entries, for all offered tools or just ``names`` (in that order)."""
        chosen = [self.get(n) for n in names] if names is not None else self.all_tools()
        return [t.openai() for t in chosen]

    def toolmeta(self) -> dict[str, Any]:
        """GTA ``toolmeta.json`` shape: name → {name, description, inputs, outputs}."""
        return {
            t.name: {
                "name": t.name,
                "description": t.description,
                "inputs": t.meta.get("inputs") or _inputs_from_schema(t.parameters),
                "outputs": t.meta.get("outputs") or [_param("text")],
            }
            for t in self.all_tools()
        }


def _param(
    kind: str, name: str | None = None, description: str | None = None, optional: bool = False, default: Any = None
) -> dict[str, Any]:
    return {
        "type": kind,
        "name": name,
        "description": description,
        "optional": optional,
        "default": default,
        "filetype": None,
    }


_JSON_TO_META = {"string": "text", "integer": "int", "number": "float", "boolean": "bool"}


def _inputs_from_schema(schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    return [
        _param(
            _JSON_TO_META.get(p.get("type", ""), p.get("type", "text")),
            k,
            p.get("description"),
            k not in required,
            p.get("default"),
        )
        for k, p in schema.get("properties", {}).items()
    ]
