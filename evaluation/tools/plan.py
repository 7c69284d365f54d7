"""ATP-Bench plan calls: find ``<tool>{json}</tool>`` tags in free text and check each payload.

The parser is tolerant because models are sloppy (code fences inside tags, single quotes, trailing
commas, a missing closing tag at the very end); the validator is strict, because ATP's format
correctness metric (2c) is exactly "follows the JSON schema and the <tool> tag syntax". Each parsed
call records whether it needed repair, so a scorer can tell clean calls from rescued ones.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from evaluation.tools.schema import SchemaError, check_object
from store import safe_json

PLAN_SET = "atp"
_TAG = re.compile(r"<tool>(.*?)(?:</tool>|(?=<tool>)|\Z)", re.S | re.I)
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.I)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_plan_calls(text: str) -> list[dict[str, Any]]:
    """Every ``<tool>…</tool>`` block in order, as dicts with keys:

    ``index`` (order of appearance), ``start``/``end`` (character span in ``text``), ``raw`` (the
    text between the tags), ``payload`` (the decoded object or None), ``repaired`` (decoding needed
    leniency), ``closed`` (a closing tag was present), ``parse_error`` (why decoding failed, or None),
    and — when the payload is an object — ``tool_name``, ``description`` and ``params``.
    """
    calls: list[dict[str, Any]] = []
    for k, m in enumerate(_TAG.finditer(text or "")):
        raw = m.group(1)
        closed = m.group(0).lower().endswith("</tool>")
        payload, repaired, error = _decode(raw)
        call: dict[str, Any] = {
            "index": k,
            "start": m.start(),
            "end": m.end(),
            "raw": raw,
            "payload": payload,
            "repaired": repaired or not closed,
            "closed": closed,
            "parse_error": error,
        }
        if isinstance(payload, dict):
            call["tool_name"] = payload.get("tool_name")
            call["description"] = payload.get("description")
            call["params"] = payload.get("params")
        calls.append(call)
    return calls


def _decode(raw: str) -> tuple[Any, bool, str | None]:
    body = raw.strip()
    try:
        return safe_json.loads(body), False, None
    except json.JSONDecodeError as exc:
        first_error = f"{exc.msg} at position {exc.pos}"
    candidate = _FENCE.sub("", body)
    start, end = candidate.find("{"), candidate.rfind("}")
    if start != -1 and end > start:
        candidate = candidate[start : end + 1]
    candidate = _TRAILING_COMMA.sub(r"\1", candidate)
    try:
        return safe_json.loads(candidate), True, None
    except json.JSONDecodeError:
        pass
    try:  # Python-literal style: single quotes, True/False/None
        value = ast.literal_eval(candidate)
        if isinstance(value, dict):
            return value, True, None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    return None, False, f"not a JSON object: {first_error}"


def validate_plan_call(payload: Any) -> tuple[bool, str | None]:
    """Is this a well-formed ATP call? ``(True, None)`` or ``(False, reason)``.

    Accepts the decoded object or the raw JSON text between the tags. The tool name must be one of
    the five (exact spelling), ``description`` a non-empty string, and ``params`` an object matching
    that tool's parameters.
    """
    from evaluation.tools.registry import get_tool_set

    if isinstance(payload, str):
        try:
            payload = safe_json.loads(payload)
        except json.JSONDecodeError as exc:
            return False, f"payload is not valid JSON: {exc.msg} at position {exc.pos}"
    if not isinstance(payload, dict):
        return False, f"payload must be a JSON object, got {type(payload).__name__}"
    missing = [k for k in ("tool_name", "description", "params") if k not in payload]
    if missing:
        return False, f"payload is missing {', '.join(missing)}"
    extra = sorted(set(payload) - {"tool_name", "description", "params"})
    if extra:
        return False, f"payload has unexpected keys {', '.join(extra)}"
    ts = get_tool_set(PLAN_SET)
    name = payload["tool_name"]
    if name not in ts.tools:
        hint = next((t for t in ts.names() if isinstance(name, str) and t.lower() == name.strip().lower()), None)
        suffix = f" (did you mean {hint!r}?)" if hint else ""
        return False, f"unknown tool_name {name!r}{suffix}; expected one of {', '.join(ts.names())}"
    if not isinstance(payload["description"], str) or not payload["description"].strip():
        return False, "description must be a non-empty string"
    params = payload["params"]
    if not isinstance(params, dict):
        return False, f"params must be an object, got {type(params).__name__}"
    try:
        check_object(params, ts.get(name).parameters, f"{name}.params")
    except SchemaError as exc:
        return False, str(exc)
    return True, None
