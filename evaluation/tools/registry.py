"""Tools, named versioned tool sets, and the one ``execute`` entry point every caller uses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import OperationalError

from evaluation.tools.result import StoreBusy, ToolContext, ToolError, ToolOutput, ToolResult
from evaluation.tools.schema import SchemaError, check_object
from evaluation.tools.toolset import KINDS, Impl, Tool, ToolSet, UnknownTool, UnknownToolSet
from store import safe_json

__all__ = [
    "KINDS",
    "Impl",
    "Tool",
    "ToolSet",
    "UnknownTool",
    "UnknownToolSet",
    "execute",
    "get_tool_set",
    "parse_arguments",
    "register_set",
    "tool_set_names",
]

_SETS: dict[str, Callable[[], ToolSet]] = {}
_BUILT: dict[str, ToolSet] = {}
_FROM_PLUGINS: list[object] = [None]  # the plugin list the sets were last read from
_PLUGIN_SETS: set[str] = set()  # the names registered from it


def register_set(name: str, build: Callable[[], ToolSet]) -> None:
    _SETS[name] = build


def tool_set_names() -> list[str]:
    _load_plugin_sets()
    return list(_SETS)


def get_tool_set(name: str) -> ToolSet:
    _load_plugin_sets()
    if name not in _BUILT:
        if name not in _SETS:
            raise UnknownToolSet(f"unknown tool set {name!r}; known tool sets: {', '.join(_SETS)}")
        _BUILT[name] = _SETS[name]()
    return _BUILT[name]


def _load_plugin_sets() -> None:
    """Register the tool set of every benchmark plugin that defines one (its ``tool_set_builder``,
    imported when the set is first built); again when the plugins were looked up anew, dropping the
    sets of plugins no longer there."""
    from store.plugins import benchmark_plugins

    plugins = benchmark_plugins()
    if _FROM_PLUGINS[0] is plugins:
        return
    _FROM_PLUGINS[0] = plugins
    for name in _PLUGIN_SETS:
        _SETS.pop(name, None)
        _BUILT.pop(name, None)
    _PLUGIN_SETS.clear()
    for plugin in plugins:
        if plugin.tool_set and plugin.tool_set_builder and plugin.tool_set not in _SETS:
            register_set(plugin.tool_set, _builder(plugin.tool_set_builder))
            _PLUGIN_SETS.add(plugin.tool_set)


def _builder(dotted: str) -> Callable[[], ToolSet]:
    def build() -> ToolSet:
        from store.plugins import resolve

        made = resolve(dotted)()
        if not isinstance(made, ToolSet):
            raise TypeError(f"{dotted} built a {type(made).__name__}, not a ToolSet")
        return made

    return build


def parse_arguments(args: Any) -> dict[str, Any]:
    """Arguments as a dict: models send JSON strings, callers send dicts; anything else is an error."""
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        try:
            args = safe_json.loads(args)
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

    def failed(error: str) -> ToolResult:
        return ToolResult(ok=False, error=error, tool=tool_name, tool_set=ts.name)

    try:
        tool = ts.get(tool_name)
    except UnknownTool as exc:
        return failed(str(exc))
    try:
        parsed = check_object(parse_arguments(args), tool.parameters, tool.name)
        if tool.kind == "plan" or tool.impl is None:
            raise ToolError(
                f"{tool.name} is a plan-only tool of the {ts.name!r} set: calls are recorded and judged, never executed"
            )
        out = tool.implementation()(parsed, ctx)  # type: ignore[misc]
    except (ToolError, SchemaError) as exc:
        return failed(str(exc))
    except (StoreBusy, OperationalError):
        raise
    except Exception as exc:  # a library failure inside the tool (cv2.error, PIL errors, ...)
        return failed(f"{tool.name} failed: {type(exc).__name__}: {exc}")
    return _finish(out, ctx, base)


def _finish(out: ToolOutput, ctx: ToolContext, base: dict[str, Any]) -> ToolResult:
    """Append produced images to the context (and the asset store when there is one: the bytes are
    then encoded here; otherwise when the caller first reads ``ToolResult.images``)."""
    asset_ids: list[int] = []
    names = list(out.image_names)
    for i, data in enumerate(out.images):
        ctx.images.append(data)
        if i >= len(names):
            names.append(f"produced_{len(ctx.images) - 1}.png")
        ctx.files[names[i]] = data
        if ctx.session is not None and ctx.blobs is not None:
            from store.blobs import put_asset

            from evaluation.tools.images import image_bytes

            asset_ids.append(put_asset(ctx.session, ctx.blobs, image_bytes(data)).id)  # type: ignore[arg-type]
    return ToolResult(
        ok=True,
        text=out.text,
        data=out.data,
        produced=list(out.images),
        asset_ids=asset_ids,
        image_names=names,
        replayed=out.replayed,
        **base,
    )
