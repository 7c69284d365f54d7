"""Text from data (dataset queries, model answers, tool output, names) made safe to show on a terminal.

A terminal acts on control characters: ESC starts sequences that clear the screen, retitle the window or
rewrite the clipboard, ``\\r`` and ``\\b`` let later text overwrite earlier text, C1 controls are the
8-bit forms of the same, and bidirectional overrides reorder what is shown. Every place where data meets
a terminal (CLI tables and plain output, the TUI's widgets) passes it through ``visible``, which shows
each such character as an escape (``\\x1b``, ``\\r``, ``\\u202e``) instead. Rich markup in data is a TUI
concern: ``data_text`` gives a ``rich.text.Text``, which Textual shows as it is, never parsing ``[bold]``.

JSON output keeps the values exactly: ``json_safe`` only writes the characters JSON does not escape
itself (C1 controls, DEL, bidirectional and line-separator characters, lone surrogates, which an UTF-8
stream cannot carry at all) as ``\\uXXXX``, which parses back to the same string.
"""

from __future__ import annotations

import re
from typing import Any

import click

# C0 controls but tab/newline, DEL, C1 controls, lone surrogates, line/paragraph separators, and the
# bidirectional marks, embeddings, overrides and isolates (Trojan Source).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# (with newlines kept, so is a CR right before LF: a CRLF line end cannot overwrite anything)
_UNSAFE = re.compile(f"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029{_BIDI}]")
_UNSAFE_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029{_BIDI}]")
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\x00": "\\0"}
# What JSON leaves raw that a terminal would act on or reorder.
_JSON_RAW_UNSAFE = re.compile(f"[\x7f-\x9f\ud800-\udfff\u2028\u2029{_BIDI}]")


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(value: Any, limit: int) -> str:
    """``value`` on one line (runs of whitespace, newlines included, become one space), at most ``limit``
    characters, ending in "…" when cut: a list row stays one row and never passes a cut text as whole."""
    text = " ".join(str(value if value is not None else "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def visible(value: Any, *, keep_newlines: bool = False) -> str:
    """``value`` as text with every control character shown as an escape (``None`` is empty).

    ``keep_newlines`` keeps ``\\n``, ``\\t`` and CRLF line ends (multi-line text shown as such); otherwise
    they are escaped too, so a table cell stays on its line.
    """
    text = "" if value is None else value if isinstance(value, str) else str(value)
    if text.isprintable():  # the common case: nothing to do (isprintable is False for \n and \t too)
        return text
    return (_UNSAFE if keep_newlines else _UNSAFE_ONE_LINE).sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text with the characters JSON itself leaves raw but a terminal acts on written as ``\\uXXXX``.

    Only valid inside already-serialized JSON: such characters can only occur inside strings there, where
    the escape means the same character.
    """
    return _JSON_RAW_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo(message: Any = None, **kwargs: Any) -> None:
    """``click.echo`` for plain output that carries data: control characters shown escaped, newlines kept."""
    click.echo(None if message is None else visible(message, keep_newlines=True), **kwargs)


def data_text(value: Any, *, keep_newlines: bool = True, style: str = "") -> Any:
    """A ``rich.text.Text`` of data for a Textual widget: no markup parsed, control characters visible."""
    from rich.text import Text

    return Text(visible(value, keep_newlines=keep_newlines), style=style)


def data_content(value: Any) -> Any:
    """A Textual ``Content`` of data (never markup), control characters visible and newlines kept:
    a plain ``Content`` passes ESC and ``\\r`` to the terminal as they are."""
    from textual.content import Content

    return Content(visible(value, keep_newlines=True))


# One visible stand-in per character, for text that is edited in place (a cursor moves over it, so the
# length must not change): C0 controls as their Control Pictures (ESC → ␛, CR → ␍), DEL as ␡, the rest as �.
PICTURES = {
    **{c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)},
    0x7F: 0x2421,
    **{c: 0xFFFD for c in range(0x80, 0xA0)},
    **{ord(c): 0xFFFD for c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"},
}


def pictured(text: str) -> str:
    """``text`` with each control character replaced by one visible character (same length)."""
    return text if text.isprintable() else text.translate(PICTURES)


def data_cells(*values: Any) -> list[Any]:
    """Table cells from data: a Textual ``DataTable`` reads a plain string as markup, so strings come back
    with control characters escaped and markup escaped (a name like ``[V]`` shows as written); other values
    pass through. (Still strings, so code reading the cells back sees the same text for ordinary names.)"""
    from rich.markup import escape

    return [escape(visible(v)) if isinstance(v, str) else v for v in values]
