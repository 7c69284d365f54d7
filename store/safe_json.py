"""``json.loads`` for hostile text: a value nested deeper than ``MAX_DEPTH`` is a decode error.

Python's ``json`` recurses once per ``[`` or ``{``: text nested a few thousand deep (a few kB from a
model) raises ``RecursionError``, which no ``except ValueError`` catches, and a value a few hundred
deep parses but can overflow the stack later, when it is stored, encoded or shown. Every parser of
model replies, judge replies and tool arguments goes through ``loads``, so such text is refused
up front as ``TooDeep`` — a ``json.JSONDecodeError``, handled wherever bad JSON already is.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 100
"""Far beyond any real tool call or verdict, far below Python's recursion limit."""

# a whole string, or one left open to the end (its brackets are text, not structure)
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
_STRINGS, _BYTE_STRINGS = re.compile(_STRING), re.compile(_STRING.encode())
_NOT_BRACKET, _NOT_BYTE_BRACKET = re.compile(r"[^\[\]{}]+"), re.compile(rb"[^\[\]{}]+")
# a string, or a bracket: for finding where the first too-deep bracket is
_TOKENS, _BYTE_TOKENS = re.compile(_STRING + r"|[\[\]{}]"), re.compile(_STRING.encode() + rb"|[\[\]{}]")


class TooDeep(json.JSONDecodeError):
    """The text nests arrays/objects more than the allowed depth."""


def too_deep_at(text: str | bytes, max_depth: int = MAX_DEPTH) -> int | None:
    """The position of the first bracket that opens level ``max_depth + 1``, or None if none does.

    Linear and in C for ordinary text: the brackets outside strings are peeled one level per pass
    (at most ``max_depth`` passes); only text that still has brackets left is walked in Python, and
    that walk stops at the first bracket too deep."""
    if _opens(text) <= max_depth:  # too few brackets to get that deep
        return None
    if not _peeled(text, max_depth):
        return None
    return _first_too_deep(text, max_depth)


def _opens(text: str | bytes) -> int:
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def _peeled(text: str | bytes, max_depth: int) -> str:
    """The brackets outside strings, as ``[``/``]``, with the innermost ``max_depth`` levels removed."""
    if isinstance(text, str):
        skeleton = _NOT_BRACKET.sub("", _STRINGS.sub("", text)).translate(_SQUARE)
    else:
        skeleton = _NOT_BYTE_BRACKET.sub(b"", _BYTE_STRINGS.sub(b"", text)).decode("ascii").translate(_SQUARE)
    for _ in range(max_depth):
        peeled = skeleton.replace("[]", "")
        if peeled == skeleton:
            break
        skeleton = peeled
    return skeleton


_SQUARE = str.maketrans("{}", "[]")


def _first_too_deep(text: str | bytes, max_depth: int) -> int | None:
    tokens = _TOKENS.finditer(text) if isinstance(text, str) else _BYTE_TOKENS.finditer(text)
    depth = 0
    for m in tokens:
        first = m.group(0)[:1]
        if first in ("[", "{", b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return m.start()
        elif first in ("]", "}", b"]", b"}"):
            depth -= 1
    return None


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``, refusing values nested deeper than ``max_depth``."""
    at = too_deep_at(text, max_depth)
    if at is not None:
        raise TooDeep(f"nested more than {max_depth} levels deep", _as_text(text), at)
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # a hook that recurses, or a stack already deep: still not readable JSON
        raise TooDeep(f"nested too deeply to read (more than {max_depth} levels allowed)", _as_text(text), 0) from None


def _as_text(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")
