"""A small JSON-schema checker for tool arguments (the subset OpenAI function schemas use).

Why not the ``jsonschema`` package: it is not a dependency, and tool arguments need only types,
enums, bounds, array lengths and required keys — plus messages a model can act on ("crop: bbox_2d
must have 4 items") rather than a validator's internal path syntax.
"""

from __future__ import annotations

from typing import Any


class SchemaError(ValueError):
    """Arguments do not match the tool's parameter schema."""


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
}


def _type_ok(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, (object,)))


def check(value: Any, schema: dict[str, Any], where: str) -> Any:
    """Validate ``value`` against ``schema``; return it with integral floats made ints and defaults filled.

    Raises SchemaError naming the offending field (``where`` is the path so far).
    """
    kinds = schema.get("type")
    if kinds is not None:
        options = kinds if isinstance(kinds, list) else [kinds]
        if value is None and "null" in options:
            return None
        if not any(_type_ok(value, k) for k in options if k != "null"):
            raise SchemaError(f"{where} must be {' or '.join(options)}, got {type(value).__name__} {_show(value)}")
        if "integer" in options and isinstance(value, float):
            value = int(value)
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{where} must be one of {schema['enum']}, got {_show(value)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaError(f"{where} must be ≥ {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaError(f"{where} must be ≤ {schema['maximum']}, got {value}")
    if isinstance(value, (list, tuple)):
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise SchemaError(f"{where} must have at least {schema['minItems']} items, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise SchemaError(f"{where} must have at most {schema['maxItems']} items, got {len(value)}")
        item_schema = schema.get("items")
        if item_schema:
            value = [check(v, item_schema, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict) and ("properties" in schema or "required" in schema):
        value = check_object(value, schema, where)
    return value


def check_object(value: dict[str, Any], schema: dict[str, Any], where: str) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in value or value[k] is None]
    if missing:
        raise SchemaError(
            f"{where} is missing required {'field' if len(missing) == 1 else 'fields'} {', '.join(missing)}"
        )
    out: dict[str, Any] = {}
    for key, val in value.items():
        sub = props.get(key)
        if sub is None:
            if schema.get("additionalProperties") is False:
                raise SchemaError(f"{where} has unknown field {key!r} (allowed: {', '.join(props) or 'none'})")
            out[key] = val
            continue
        if val is None and key not in schema.get("required", []):
            continue  # an explicit null for an optional field means "use the default"
        out[key] = check(val, sub, f"{where}.{key}")
    for key, sub in props.items():
        if key not in out and "default" in sub:
            out[key] = sub["default"]
    return out


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
