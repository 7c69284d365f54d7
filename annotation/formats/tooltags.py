"""A tolerant reader and writer for ``<tool>{json}</tool>`` tags (ATP-Bench plan-only tool calls).

Models (and annotators) write these tags by hand, so the reader accepts what a person would accept:
surrounding whitespace, code fences inside the tag, single quotes or trailing commas when plain JSON
fails, and an unclosed last tag. Every tag is reported with its character position; a tag whose JSON
cannot be read is still reported (``valid=False`` with the reason), never silently dropped.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

TAG_RE = re.compile(r"<tool>(.*?)(</tool>|$)", re.DOTALL)
_FENCE_RE = re.compile(r"^```(?:json)?\s*|\s*```$")
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")


@dataclass
class ToolTag:
    """One ``<tool>`` tag found in a text."""

    raw: str  # the whole tag as written, including <tool> and </tool>
    position: int  # character offset of "<tool>" in the text
    tool_name: str | None = None
    description: str | None = None
    params: Any = None
    valid: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """The ``plan_call`` event payload (store/events.py)."""
        payload: dict[str, Any] = {
            "tool_name": self.tool_name,
            "description": self.description,
            "params": self.params,
            "raw": self.raw,
            "valid": self.valid,
            "position": self.position,
        }
        if self.error:
            payload["error"] = self.error
        return payload


def _loads_tolerant(body: str) -> Any:
    text = _FENCE_RE.sub("", body.strip()).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        repaired = _TRAILING_COMMA_RE.sub(r"\1", text)
        try:
            return json.loads(repaired)
        except json.JSONDecodeError:
            pass
        try:  # single-quoted dicts written as Python literals
            value = ast.literal_eval(repaired)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise first from None
        if isinstance(value, dict):
            return value
        raise first from None


def parse_tool_tags(text: str) -> list[ToolTag]:
    """Every ``<tool>`` tag in ``text`` in order of appearance, valid or not."""
    tags: list[ToolTag] = []
    for match in TAG_RE.finditer(text or ""):
        body, closing = match.group(1), match.group(2)
        tag = ToolTag(raw=match.group(0), position=match.start())
        if not closing and not body.strip():
            continue  # a stray "<tool>" at the very end with nothing after it
        try:
            value = _loads_tolerant(body)
        except json.JSONDecodeError as exc:
            tag.error = f"tag body is not JSON: {exc.msg} at char {exc.pos}"
            tags.append(tag)
            continue
        if not isinstance(value, dict):
            tag.error = f"tag body must be a JSON object, got {type(value).__name__}"
            tags.append(tag)
            continue
        name = value.get("tool_name")
        tag.tool_name = name if isinstance(name, str) else None
        desc = value.get("description")
        tag.description = desc if isinstance(desc, str) else None
        tag.params = value.get("params")
        tag.extra = {k: v for k, v in value.items() if k not in ("tool_name", "description", "params")}
        if not tag.tool_name:
            tag.error = "tag has no string 'tool_name'"
        elif not closing:
            tag.error = "tag is not closed with </tool>"
        else:
            tag.valid = True
        tags.append(tag)
    return tags


def split_interleaved(text: str) -> list[tuple[str, str | ToolTag]]:
    """Text and tags in order: ``[("text", "…"), ("tool", ToolTag), …]``; empty text pieces dropped."""
    pieces: list[tuple[str, str | ToolTag]] = []
    cursor = 0
    for tag in parse_tool_tags(text):
        if tag.position > cursor:
            pieces.append(("text", text[cursor : tag.position]))
        pieces.append(("tool", tag))
        cursor = tag.position + len(tag.raw)
    if cursor < len(text or ""):
        pieces.append(("text", text[cursor:]))
    return pieces


def render_tool_tag(tool_name: str, params: Any = None, description: str | None = None) -> str:
    """Write one tag the way ATP-Bench's schema orders its keys."""
    body = {"tool_name": tool_name, "description": description or "", "params": params if params is not None else {}}
    return "<tool>" + json.dumps(body, ensure_ascii=False) + "</tool>"
