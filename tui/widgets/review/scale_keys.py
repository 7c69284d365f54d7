"""Which key gives which value on a rating scale, so a rater never leaves the home row.

Two-valued label scales (yes/no, pass/fail) take ``y``/``n``; integer scales inside 0–10 take their
digit, with ``0`` standing for 10 when 0 itself is not on the scale (the 1–10 scales); any other
scale of up to nine values takes ``1``–``9`` in scale order. Larger label scales are typed.
"""

from __future__ import annotations

from typing import Any

from annotation.review.scales import Scale


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()


def scale_keys(scale: Scale) -> dict[str, Any]:
    """Key name → scale value for every value a single key can give."""
    values = list(scale.values)
    if len(values) == 2 and all(isinstance(v, str) for v in values):
        return {"y": values[0], "n": values[1]}
    if values and all(_is_int(v) and 0 <= v <= 10 for v in values):
        ints = [int(v) for v in values]
        keys: dict[str, Any] = {}
        for v, raw in zip(ints, values):
            if v == 10:
                if 0 not in ints:
                    keys["0"] = raw
            else:
                keys[str(v)] = raw
        if len(keys) == len(values):
            return keys
    if len(values) <= 9:
        return {str(i + 1): v for i, v in enumerate(values)}
    return {}


def legend(scale: Scale) -> str:
    """One line for the rater: ``y yes · n no`` or ``1–9, 0 = 10``."""
    keys = scale_keys(scale)
    if not keys:
        return "press = to type a value"
    if len(keys) > 5 and all(_is_int(v) for v in keys.values()):
        lo, hi = min(keys.values()), max(keys.values())
        text = f"{lo}–{min(hi, 9)} = value"
        if "0" in keys and keys["0"] == 10:
            text += ", 0 = 10"
        return text
    return " · ".join(f"{k} {v}" for k, v in keys.items())
