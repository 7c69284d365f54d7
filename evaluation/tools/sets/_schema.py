"""Terse builders for JSON-schema fragments, so set modules read like the seed's tool tables."""

from __future__ import annotations

from typing import Any


def obj(props: dict[str, dict[str, Any]], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required or [])}


def s(description: str | None = None, **extra: Any) -> dict[str, Any]:
    return _typed("string", description, extra)


def i(description: str | None = None, **extra: Any) -> dict[str, Any]:
    return _typed("integer", description, extra)


def n(description: str | None = None, **extra: Any) -> dict[str, Any]:
    return _typed("number", description, extra)


def b(description: str | None = None, **extra: Any) -> dict[str, Any]:
    return _typed("boolean", description, extra)


def arr(item_type: str, description: str | None = None, **extra: Any) -> dict[str, Any]:
    return _typed("array", description, {"items": {"type": item_type}, **extra})


def _typed(kind: str, description: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind}
    if description is not None:
        out["description"] = description
    out.update(extra)
    return out
