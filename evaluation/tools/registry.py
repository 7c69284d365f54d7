"""Tools, named versioned tool sets, and the one ``execute`` entry point every caller uses."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import OperationalError

from evaluation.tools.result import StoreBusy, ToolContext, ToolError, ToolOutput, ToolResult
from evaluation.tools.schema import SchemaError, check_object

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
            return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]
        return self.impl

    def openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


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
        return {t.name: {"name": t.name, "description": t.description,
                         "inputs": t.meta.get("inputs") or _inputs_from_schema(t.parameters),
                         "outputs": t.meta.get("outputs") or [_param("text")]}
                for t in self.all_tools()}


def _param(kind: str, name: str | None = None, description: str | None = None, optional: bool = False,
           default: Any = None) -> dict[str, Any]:
    return {"type": kind, "name": name, "description": description, "optional": optional,
            "default": default, "filetype": None}


_JSON_TO_META = {"string": "text", "integer": "int", "number": "float", "boolean": "bool"}


def _inputs_from_schema(schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    return [_param(_JSON_TO_META.get(p.get("type", ""), p.get("type", "text")), k, p.get("description"),
                   k not in required, p.get("default"))
            for k, p in schema.get("properties", {}).items()]


_SETS: dict[str, Callable[[], ToolSet]] = {}
_BUILT: dict[str, ToolSet] = {}


def register_set(name: str, build: Callable[[], ToolSet]) -> None:
    _SETS[name] = build


def tool_set_names() -> list[str]:
    _load_builtin_sets()
    return list(_SETS)


def get_tool_set(name: str) -> ToolSet:
    _load_builtin_sets()
    if name not in _BUILT:
        if name not in _SETS:
            raise UnknownToolSet(f"unknown tool set {name!r}; known tool sets: {', '.join(_SETS)}")
        _BUILT[name] = _SETS[name]()
    return _BUILT[name]


def _load_builtin_sets() -> None:
    if _SETS:
        return
    from evaluation.tools.sets import register_all

    register_all()


def parse_arguments(args: Any) -> dict[str, Any]:
    """Arguments as a dict: models send JSON strings, callers send dicts; anything else is an error."""
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            raise ToolError(f"arguments are not valid JSON: {exc.msg} at position {exc.pos}") from exc
    if not isinstance(args, dict):
        raise ToolError(f"arguments must be a JSON object, got {type(args).__name__}")
    return args


def execute(tool_set: str, tool_name: str, args: Any, ctx: ToolContext | None = None) -> ToolResult:
    """Run one tool call. Never raises for a tool-level failure: bad arguments, a missing image, an
    unreachable backend or an exception inside the tool all come back as ``ok=False`` with a message.
    An unknown *tool set* is a programming error and raises UnknownToolSet; a database that stays
    locked or fails (``StoreBusy``, SQLAlchemy's OperationalError) is the caller's problem, never a
    tool result shown to a model.
    """
    ctx = ctx if ctx is not None else ToolContext()
    ts = get_tool_set(tool_set)
    base = {"tool": tool_name, "tool_set": ts.name}
    try:
        tool = ts.get(tool_name)
    except UnknownTool as exc:
        return ToolResult(ok=False, error=str(exc), **base)
    try:
        parsed = check_object(parse_arguments(args), tool.parameters, tool.name)
        if tool.kind == "plan" or tool.impl is None:
            raise ToolError(f"{tool.name} is a plan-only tool of the {ts.name!r} set: calls are recorded "
                            "and judged, never executed")
        out = tool.implementation()(parsed, ctx)  # type: ignore[misc]
    except (ToolError, SchemaError) as exc:
        return ToolResult(ok=False, error=str(exc), **base)
    except (StoreBusy, OperationalError):
        raise
    except Exception as exc:  # a library failure inside the tool (cv2.error, PIL errors, ...)
        return ToolResult(ok=False, error=f"{tool.name} failed: {type(exc).__name__}: {exc}", **base)
    return _finish(out, ctx, base)


def _finish(out: ToolOutput, ctx: ToolContext, base: dict[str, Any]) -> ToolResult:
    """Append produced images to the context (and the asset store when there is one)."""
    asset_ids: list[int] = []
    names = list(out.image_names)
    for i, data in enumerate(out.images):
        ctx.images.append(data)
        if i >= len(names):
            names.append(f"produced_{len(ctx.images) - 1}.png")
        ctx.files[names[i]] = data
        if ctx.session is not None and ctx.blobs is not None:
            from store.blobs import put_asset

            asset_ids.append(put_asset(ctx.session, ctx.blobs, data).id)  # type: ignore[arg-type]
    return ToolResult(ok=True, text=out.text, data=out.data, images=list(out.images), asset_ids=asset_ids,
                      image_names=names, replayed=out.replayed, **base)
