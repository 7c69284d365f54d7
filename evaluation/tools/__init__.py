"""The tool runtime: every seed benchmark's tools, executable offline where they can be, behind one
registry. Callers use only these names::

    ts = get_tool_set("gta")            # any set a benchmark plugin defines: tool_set_names()
    result = execute("gta", "OCR", {"image": "image/image_96.jpg"}, ToolContext(files={...}))

``execute`` never raises for a tool-level failure; it returns ``ToolResult(ok=False, error=...)``.
"""

from __future__ import annotations

from evaluation.tools.plan import parse_plan_calls, validate_plan_call
from evaluation.tools.registry import (
    Tool,
    ToolSet,
    UnknownTool,
    UnknownToolSet,
    execute,
    get_tool_set,
    parse_arguments,
    tool_set_names,
)
from evaluation.tools.result import ToolContext, ToolError, ToolOutput, ToolResult, ToolSettings

__all__ = [
    "Tool",
    "ToolSet",
    "ToolContext",
    "ToolResult",
    "ToolOutput",
    "ToolError",
    "ToolSettings",
    "UnknownTool",
    "UnknownToolSet",
    "execute",
    "get_tool_set",
    "tool_set_names",
    "parse_arguments",
    "validate_plan_call",
    "parse_plan_calls",
]
