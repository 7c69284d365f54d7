"""The one way the TUI reads and writes a ``Select``: ``None`` means "nothing chosen".

The pinned Textual marks an empty ``Select`` with ``Select.NULL`` (a ``NoSelection`` object).
``Select.BLANK`` is an unrelated attribute every widget has (``False``); writing it into a ``Select``
raises ``InvalidSelectValueError`` and comparing against it never matches. Screens therefore never
touch either constant: they read with ``chosen`` and write with ``choose``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.widgets import Select
from textual.widgets._select import NoSelection

NO_SELECTION = Select.NULL
"""What Textual stores in a ``Select`` that has no value (only this module should need it)."""


def data_options(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Text, Any]]:
    """``(label, value)`` options whose labels hold data (benchmark, category, endpoint, people's names):
    a ``Select`` reads a plain string label as markup, so ``[/x]`` in a name would crash the screen and
    an escape sequence would reach the terminal. The labels come back as ``Text``, shown as written."""
    from tui.safe_text import data_text

    return [(data_text(label, keep_newlines=False), value) for label, value in pairs]


def is_nothing(value: Any) -> bool:
    """True for Textual's "no selection" marker (and for ``None``, our own spelling of it)."""
    return value is None or isinstance(value, NoSelection)


def chosen(select: Select[Any]) -> Any | None:
    """The selected value, or ``None`` when the select is blank."""
    value = select.value
    return None if is_nothing(value) else value


def choose(select: Select[Any], value: Any | None) -> None:
    """Select ``value``; ``None`` or a value the select does not offer leaves it blank (or, for a
    select that cannot be blank, unchanged), never an exception."""
    try:
        offered = value is not None and value in _values(select)
    except TypeError:  # an unhashable value is never an option
        offered = False
    if offered:
        select.value = value
    elif select._allow_blank:  # Textual exposes no public getter
        select.clear()


def _values(select: Select[Any]) -> set[Any]:
    return {v for v in getattr(select, "_legal_values", set()) if not is_nothing(v)}
