"""Short human-readable lines for trajectory events (kinds and payloads as in ``store.events``).

Shared by the rating queue and the trajectory viewer so an event reads the same everywhere.
"""

from __future__ import annotations

import json
from typing import Any

from store import events as ev
from tui.safe_text import one_line, visible


def clip(text: Any, limit: int = 240) -> str:
    """One line of at most ``limit`` characters (whitespace collapsed), control characters shown escaped."""
    return visible(one_line(text, limit))


def _args(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except TypeError:
        return str(value)


def event_summary(kind: str, payload: dict[str, Any] | None, failed: bool = False, limit: int = 240) -> str:
    """What happened, in one line: ``call OCR {"image": …}``, ``result OCR ok: …``, ``answer: 42``
    (control characters in the data shown escaped)."""
    return visible(_event_summary(kind, payload, failed, limit))


def _event_summary(kind: str, payload: dict[str, Any] | None, failed: bool, limit: int) -> str:
    p = payload or {}
    mark = "✗ " if failed else ""
    if kind == ev.MODEL_MESSAGE:
        calls = p.get("tool_calls") or []
        text = clip(p.get("content") or p.get("reasoning") or "", limit)
        if calls:
            names = ", ".join(str(c.get("name")) for c in calls)
            return f"{mark}model → {names}" + (f"  {text}" if text else "")
        return f"{mark}model: {text}"
    if kind == ev.USER_MESSAGE:
        content = p.get("content")
        if isinstance(content, list):
            parts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
            images = sum(1 for c in content if isinstance(c, dict) and c.get("type") != "text")
            content = " ".join(parts) + (f" [+{images} image(s)]" if images else "")
        return f"{p.get('role', 'user')}: {clip(content, limit)}"
    if kind == ev.TOOL_CALL:
        return f"{mark}call {p.get('name')} {clip(_args(p.get('arguments')), limit)}"
    if kind == ev.TOOL_RESULT:
        ok = "ok" if p.get("ok", True) and not failed else "error"
        body = p.get("error") if ok == "error" and p.get("error") else p.get("text")
        images = len(p.get("asset_ids") or [])
        return f"{mark}result {p.get('name')} {ok}: {clip(body, limit)}" + (f" [+{images} image(s)]" if images else "")
    if kind == ev.CODE_EXEC:
        ops = ", ".join(str(o.get("op")) for o in p.get("ops") or [])
        status = "timed out" if p.get("timed_out") else f"exit {p.get('exit_code')}"
        return f"{mark}code ({status}{'; ' + ops if ops else ''}): {clip(p.get('stdout') or p.get('stderr'), limit)}"
    if kind == ev.PLAN_CALL:
        valid = "" if p.get("valid", True) else " (invalid)"
        return f"{mark}plan {p.get('tool_name')}{valid} {clip(_args(p.get('params')), limit)}"
    if kind == ev.STEP_PREDICTION:
        return f"{mark}step {p.get('gold_index')}: {clip(_args(p.get('prediction')), limit)}"
    if kind == ev.ANSWER:
        return f"{mark}answer: {clip(p.get('text'), limit)}"
    if kind == ev.ERROR:
        return f"✗ error {p.get('type', '')}: {clip(p.get('message'), limit)}"
    return f"{mark}{kind}: {clip(_args(p), limit)}"


def event_assets(payload: dict[str, Any] | None) -> list[int]:
    """Asset ids an event produced or showed."""
    return [int(a) for a in (payload or {}).get("asset_ids") or [] if isinstance(a, int)]


def value_text(value: Any) -> str:
    """A rating value for display: dimensional values as ``dim=v`` pairs."""
    if isinstance(value, dict):
        return visible(", ".join(f"{k}={v}" for k, v in value.items()))
    if isinstance(value, list):
        return visible(", ".join(map(str, value)))
    return "—" if value is None else visible(value)
