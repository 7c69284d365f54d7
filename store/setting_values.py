"""One setting's value made the type its field declares, as pydantic's lax mode made it.

Settings used to be a pydantic-settings model; users' files and variables were read by its rules, so
these keep them: an environment string or a TOML value of another type is converted where pydantic
converted it (``"42"``, ``" 1_000 "`` and ``42.0`` are the int 42…; ``"yes"``/``"off"`` in any case are
booleans) and refused where it refused, with its message text. Standard library only (issue #20).
"""

import dataclasses
import math
import re
import types
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, Union, get_args, get_origin


class Problem(NamedTuple):
    """Why a value was refused: where (setting name, then a key for a table), a kind, a message, the input."""

    loc: tuple[str, ...]
    kind: str
    message: str
    value: Any


@dataclasses.dataclass(frozen=True)
class Spec:
    """A setting's declared type and limits: ``kind`` is str, int, float, bool, choice (Literal) or map."""

    name: str
    kind: str
    optional: bool
    default: Any
    description: str
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()


_KINDS = {str: "str", int: "int", float: "float", bool: "bool"}


def spec_of(field: "dataclasses.Field[Any]") -> Spec:
    """The Spec of one field of the settings dataclass, from its annotation and metadata."""
    annotation, optional = field.type, False
    if get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"setting {field.name}: one type or None, not {annotation}")
        annotation, optional = rest[0], True
    choices: tuple[str, ...] = ()
    if get_origin(annotation) is Literal:
        kind, choices = "choice", get_args(annotation)
    elif get_origin(annotation) is dict and get_args(annotation) == (str, str):
        kind = "map"
    elif annotation in _KINDS:
        kind = _KINDS[annotation]
    else:
        raise TypeError(f"setting {field.name}: type {annotation} is not one settings can read")
    default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
    meta = field.metadata
    return Spec(field.name, kind, optional, default, meta["description"], meta["ge"], meta["le"], choices)


def validate(spec: Spec, value: Any) -> tuple[Any, list[Problem]]:
    """The value converted to the setting's type, or the problems found (then the value is unusable)."""
    loc = (spec.name,)
    if value is None and spec.optional:
        return None, []
    if spec.kind == "map":
        return _as_map(loc, value)
    if spec.kind == "choice":
        if isinstance(value, str) and value in spec.choices:
            return value, []
        listed = ", ".join(repr(c) for c in spec.choices[:-1]) + f" or {spec.choices[-1]!r}"
        return None, [Problem(loc, "literal_error", f"Input should be {listed}", value)]
    try:
        converted = _CONVERT[spec.kind](value)
    except _Refused as why:
        return None, [Problem(loc, why.kind, why.message, value)]
    if spec.ge is not None and not converted >= spec.ge:
        return None, [
            Problem(loc, "greater_than_equal", f"Input should be greater than or equal to {_number(spec.ge)}", value)
        ]
    if spec.le is not None and not converted <= spec.le:
        return None, [
            Problem(loc, "less_than_equal", f"Input should be less than or equal to {_number(spec.le)}", value)
        ]
    return converted, []


def _number(bound: float) -> str:
    """A bound as pydantic wrote it: 1.0 as ``1``."""
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _as_map(loc: tuple[str, ...], value: Any) -> tuple[Any, list[Problem]]:
    """A table of strings (TOML and JSON keys are always strings)."""
    if not isinstance(value, dict):
        return None, [Problem(loc, "dict_type", "Input should be a valid dictionary", value)]
    problems = [
        Problem((*loc, str(k)), "string_type", "Input should be a valid string", v)
        for k, v in value.items()
        if not isinstance(v, str)
    ]
    return (None if problems else dict(value)), problems


class _Refused(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


_INT_PARSING = ("int_parsing", "Input should be a valid integer, unable to parse string as an integer")
_INT_SIZE = ("int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size")
_BOOL_PARSING = ("bool_parsing", "Input should be a valid boolean, unable to interpret input")
# What Rust's str::trim removes (Unicode White_Space): pydantic trims numbers given as text with it.
_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)", re.ASCII)  # an integer as JSON writes it
_FLOAT_TEXT = re.compile(r"[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)", re.ASCII | re.I)
_MAX_DIGITS = 4300  # Python's own limit on int(str)
_TRUE = {"1", "t", "y", "on", "yes", "true"}
_FALSE = {"0", "f", "n", "no", "off", "false"}


def _without_underscores(text: str) -> str | None:
    """``1_000`` as ``1000``: single underscores between other characters only (None: no such underscores)."""
    if "_" not in text or text.startswith("_") or text.endswith("_") or "__" in text:
        return None
    return text.replace("_", "")


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _float_to_int(value)
    if isinstance(value, str):
        return _text_to_int(value)
    raise _Refused("int_type", "Input should be a valid integer")


def _text_to_int(text: str) -> int:
    """An int written plainly, or after trimming, a sign, leading zeros, ``.000`` and digit underscores."""
    plain = _PLAIN_INT.match(text)
    if plain and len(plain[0].lstrip("-")) > _MAX_DIGITS:  # too many digits, whatever follows them
        raise _Refused(*_INT_SIZE)
    if plain and plain.end() == len(text):
        return int(text)
    tidy = _tidy_int_text(text)
    if tidy is None or not _PLAIN_INT.fullmatch(tidy) or len(tidy.lstrip("-")) > _MAX_DIGITS:
        raise _Refused(*_INT_PARSING)
    return int(tidy)


def _tidy_int_text(text: str) -> str | None:
    """The text in the plain form an int is parsed from, or None when it cannot be an int."""
    body = text.strip(_SPACE)
    if body.startswith("+"):
        body = body[1:]
        if body.startswith("-"):
            return None
    sign = ""
    if body.startswith("-"):
        body, sign = body[1:], "-"
        if body.startswith(("-", "+")):
            return None
    digits = _after_leading_zeros(body)
    if digits is None:
        return None
    whole, dot, fraction = digits.partition(".")
    if dot and fraction and not fraction.strip("0"):
        digits = whole
    plain = _without_underscores(digits)
    if plain is not None:
        return sign + plain
    if len(digits) == len(text):  # nothing was tidied away: the plain parse already refused it
        return None
    return sign + digits


def _after_leading_zeros(body: str) -> str | None:
    """``body`` without its leading zeros (and underscores among them), keeping one zero before ``.`` or alone."""
    if not body or (body[0] != "0" and body[0] not in "123456789-"):
        return None
    if body[0] != "0":
        return body
    for i in range(1, len(body)):
        c = body[i]
        if c in "123456789-":
            return body[i:]
        if c == ".":
            return body[i - 1 :]
        if c not in "0_":
            return None
    return body[-1]


def _float_to_int(value: float) -> int:
    if not math.isfinite(value):
        raise _Refused("finite_number", "Input should be a finite number")
    if value % 1:
        raise _Refused("int_from_float", "Input should be a valid integer, got a number with a fractional part")
    if not -(2.0**63) < value < 2.0**63:
        raise _Refused(*_INT_SIZE)
    return int(value)


def _to_float(value: Any) -> float:
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        # Trimmed first; underscores are then tried on the untrimmed text (as pydantic did).
        for candidate in (value.strip(_SPACE), _without_underscores(value)):
            if candidate is not None and _FLOAT_TEXT.fullmatch(candidate):
                return float(candidate)
        raise _Refused("float_parsing", "Input should be a valid number, unable to parse string as a number")
    raise _Refused("float_type", "Input should be a valid number")


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.lower() if value.isascii() else value
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise _Refused(*_BOOL_PARSING)
    if isinstance(value, float):
        try:
            value = _float_to_int(value)
        except _Refused:
            raise _Refused("bool_type", "Input should be a valid boolean") from None
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        if value in (0, 1):
            return bool(value)
        raise _Refused(*_BOOL_PARSING)
    raise _Refused("bool_type", "Input should be a valid boolean")


def _to_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise _Refused("string_type", "Input should be a valid string")


_CONVERT: dict[str, Callable[[Any], Any]] = {"int": _to_int, "float": _to_float, "bool": _to_bool, "str": _to_str}
