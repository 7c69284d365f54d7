"""Where a cursor goes when someone else's edit replaces the text around it.

A live update (a colleague's save arriving in an open editor) replaced a field's text and put the cursor at
the start: the next keys landed there and autosaved. ``map_offset`` carries a position in the old text to
the same place in the new one: it keeps its distance from the nearest text both versions share, so typing
goes on where it was going. Plain text in, plain offsets out: the widgets convert to and from their own
cursor forms (``LayeredTextArea.show_text``, ``DataInput.show_value``).
"""

from __future__ import annotations

from difflib import SequenceMatcher


def _common_prefix(old: str, new: str) -> int:
    limit = min(len(old), len(new))
    n = 0
    while n < limit and old[n] == new[n]:
        n += 1
    return n


def _common_suffix(old: str, new: str, prefix: int) -> int:
    limit = min(len(old), len(new)) - prefix
    n = 0
    while n < limit and old[-1 - n] == new[-1 - n]:
        n += 1
    return n


def map_offset(old: str, new: str, offset: int) -> int:
    """``offset`` (a position in ``old``) at the same place in ``new``.

    Text before and after the changed part keeps its positions (shifted by what was inserted or removed
    before it); a position inside a changed stretch keeps its distance from the unchanged text before it,
    clamped to the stretch's new length. The shared start and end are trimmed first, so the matcher only
    looks at what changed (a usual live edit is one stretch)."""
    offset = max(0, min(offset, len(old)))
    prefix = _common_prefix(old, new)
    if offset <= prefix:
        return offset
    suffix = _common_suffix(old, new, prefix)
    if offset >= len(old) - suffix:
        return offset + len(new) - len(old)
    old_mid, new_mid = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]
    return prefix + _map_within(old_mid, new_mid, offset - prefix)


def _map_within(old: str, new: str, offset: int) -> int:
    """``map_offset`` for the changed middle: follow the stretches the two texts still share."""
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal" and i1 <= offset <= i2:
            return j1 + offset - i1
        if tag != "equal" and i1 <= offset < i2:
            return j1 + min(offset - i1, j2 - j1)
    return len(new)
