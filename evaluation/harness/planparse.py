"""ATP ``<tool>{json}</tool>`` blocks → planned-call payloads (``store.events.PLAN_CALL``).

The parse is tolerant the way a judge reading the answer would be: code fences, smart quotes,
single quotes, trailing commas and a last unclosed tag are accepted; what still is not a JSON object
is kept as an invalid call with the reason. Validation of a parsed call uses the tool runtime's
``validate_plan_call`` when the tool set provides it, else the structural rules of the paper §3.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from store import safe_json

_BLOCK = re.compile(r"<\s*tool\s*>(.*?)(?:<\s*/\s*tool\s*>|(?=<\s*tool\s*>)|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SMART = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def _load(text: str) -> tuple[Any, str | None]:
    body = _FENCE.sub("", text.strip()).strip()
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end < start:
        return None, "no JSON object inside the <tool> tag"
    body = body[start : end + 1]
    for candidate in (body, body.translate(_SMART), _TRAILING_COMMA.sub(r"\1", body.translate(_SMART))):
        try:
            return safe_json.loads(candidate), None
        except safe_json.TooDeep as exc:
            return None, f"the <tool> payload is not valid JSON ({exc.msg})"
        except ValueError:
            pass
    try:  # single-quoted Python-style dicts
        value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", body.translate(_SMART)))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        return None, f"the <tool> payload is not valid JSON ({type(exc).__name__})"
    not_json = _not_json(value)
    if not_json:  # a Python literal JSON has no form for: never let it into a payload
        return None, f"the <tool> payload is not valid JSON (it holds a Python {not_json})"
    return _lists(value), None


def _not_json(value: Any, depth: int = 0) -> str | None:
    """The name of the first value in ``value`` that JSON cannot hold (a set, bytes, a complex
    number, a non-string key, …), or None."""
    if depth > 100:
        return "structure nested too deeply"
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "non-finite number"
    if isinstance(value, (list, tuple)):
        return next((w for w in (_not_json(v, depth + 1) for v in value) if w), None)
    if isinstance(value, dict):
        bad_key = next((k for k in value if not isinstance(k, str)), None)
        if bad_key is not None:
            return f"{type(bad_key).__name__} key"
        return next((w for w in (_not_json(v, depth + 1) for v in value.values()) if w), None)
    return type(value).__name__


def _lists(value: Any) -> Any:
    """Tuples as lists, so the payload is exactly what its JSON will read back as."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _structural_check(payload: Any, allowed: set[str] | None) -> tuple[bool, str | None]:
    if not isinstance(payload, dict):
        return False, "the <tool> payload must be a JSON object"
    name = payload.get("tool_name")
    if not isinstance(name, str) or not name:
        return False, "missing tool_name"
    if allowed is not None and name not in allowed:
        return False, f"unknown tool {name!r}; tools: {', '.join(sorted(allowed))}"
    if not isinstance(payload.get("description"), str):
        return False, "missing description (a string)"
    if not isinstance(payload.get("params"), dict):
        return False, "params must be a JSON object"
    return True, None


def _validator() -> Any:
    try:
        from evaluation.tools import validate_plan_call
    except ImportError:
        return None
    return validate_plan_call


def parse_and_validate(text: str, allowed: set[str] | None = None) -> list[dict[str, Any]]:
    validate = _validator()
    calls = []
    for m in _BLOCK.finditer(text or ""):
        inner = m.group(1)
        payload, error = _load(inner)
        valid, why = (False, error) if error else _structural_check(payload, allowed)
        if valid and validate is not None:
            try:
                ok, reason = validate(payload)
            except Exception as exc:  # a validator bug must not lose the call
                ok, reason = False, f"validator failed: {exc}"
            valid, why = bool(ok), reason if not ok else None
        p = payload if isinstance(payload, dict) else {}
        call = {
            "tool_name": p.get("tool_name"),
            "description": p.get("description"),
            "params": p.get("params"),
            "raw": m.group(0),
            "valid": valid,
            "position": m.start(),
        }
        if why:
            call["error"] = why
        calls.append(call)
    return calls
