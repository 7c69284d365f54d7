"""Three-way merge of one field that two people edited from the same starting value.

Line based, as version control does it: a run of lines only one side changed takes that side's
lines; a run both changed the same way is taken once; a run both changed differently is a conflict,
written between markers for the annotator to settle. Values that are not text (an answer spec)
are merged as their canonical JSON (sorted keys, one key per line), so edits of different keys
merge and the result is parsed back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

MINE_MARK = "<<<<<<< yours"
SPLIT_MARK = "======="


def theirs_mark(who: str) -> str:
    return f">>>>>>> {who}'s"


@dataclass(frozen=True)
class Merged:
    text: str
    conflicts: int  # runs of lines both sides changed differently (each between markers in ``text``)


def merge_text(base: str, mine: str, theirs: str, *, who: str = "theirs") -> Merged:
    b, m, t = base.splitlines(keepends=True), mine.splitlines(keepends=True), theirs.splitlines(keepends=True)
    for lines in (b, m, t):  # the last line may lack its newline; markers must start on a line of their own
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    in_mine, in_theirs = _matched(b, m), _matched(b, t)
    out: list[str] = []
    conflicts = 0
    i = j = k = 0
    while True:
        # the next base line both sides kept: everything before it is one changed run
        stable = next((s for s in range(i, len(b)) if s in in_mine and s in in_theirs), None)
        end_b, end_m, end_t = (
            (len(b), len(m), len(t)) if stable is None else (stable, in_mine[stable], in_theirs[stable])
        )
        run_b, run_m, run_t = b[i:end_b], m[j:end_m], t[k:end_t]
        if run_m == run_b:
            out += run_t
        elif run_t == run_b or run_t == run_m:
            out += run_m
        else:
            conflicts += 1
            out += [MINE_MARK + "\n", *run_m, SPLIT_MARK + "\n", *run_t, theirs_mark(who) + "\n"]
        if stable is None:
            break
        out.append(b[stable])
        i, j, k = stable + 1, in_mine[stable] + 1, in_theirs[stable] + 1
    text = "".join(out)
    # the final newline is one more thing either side may have changed
    base_nl, mine_nl, theirs_nl = (x.endswith("\n") for x in (base, mine, theirs))
    if not (theirs_nl if mine_nl == base_nl else mine_nl) and text.endswith("\n"):
        text = text[:-1]
    return Merged(text, conflicts)


def _matched(base: list[str], other: list[str]) -> dict[int, int]:
    """Base line index → the index of the same line in ``other``, for lines the diff keeps."""
    pairs: dict[int, int] = {}
    for block in SequenceMatcher(None, base, other, autojunk=False).get_matching_blocks():
        for n in range(block.size):
            pairs[block.a + n] = block.b + n
    return pairs


def as_text(value: Any) -> str:
    """How a field's value is shown and merged: text as is, anything else as canonical JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def merge_values(base: Any, mine: Any, theirs: Any, *, who: str = "theirs") -> Merged:
    """Text merges by lines; objects (answer specs) key by key, written as JSON with markers around
    the keys both sides changed differently."""
    if all(isinstance(v, dict) for v in (base, mine, theirs)):
        return _merge_objects(base, mine, theirs, who)
    return merge_text(as_text(base), as_text(mine), as_text(theirs), who=who)


_GONE = object()


def _merge_objects(base: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any], who: str) -> Merged:
    keys = sorted(set(base) | set(mine) | set(theirs))
    entries: list[tuple[Any, Any]] = []  # (value, None) merged; (mine, theirs) in conflict; _GONE = deleted
    for key in keys:
        b, m, t = base.get(key, _GONE), mine.get(key, _GONE), theirs.get(key, _GONE)
        value = t if m == b else m if t in (b, m) else None
        if m != b and t not in (b, m):
            entries.append((m, t))
        elif value is not _GONE:
            entries.append((value, None))
        else:
            entries.append((_GONE, None))
    live = [(k, e) for k, e in zip(keys, entries) if not (e[0] is _GONE and e[1] is None)]
    out, conflicts = ["{"], 0
    for n, (key, (first, second)) in enumerate(live):
        comma = "," if n < len(live) - 1 else ""

        def entry(value: Any) -> list[str]:
            if value is _GONE:
                return []
            body = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).replace("\n", "\n  ")
            return [f"  {json.dumps(key, ensure_ascii=False)}: {body}{comma}"]

        if second is None:
            out += entry(first)
        else:
            conflicts += 1
            out += [MINE_MARK, *entry(first), SPLIT_MARK, *entry(second), theirs_mark(who)]
    out.append("}")
    return Merged("\n".join(out), conflicts)


class UnresolvedMerge(ValueError):
    """The merged text still holds conflict markers, or does not parse as the field's kind of value."""


def resolve(text: str, like: Any) -> Any:
    """The value to save from the merged ``text``: refused while a conflict marker is left; parsed as
    JSON when the field holds structured values (``like`` is one of them)."""
    lines = text.splitlines()
    marked = [n + 1 for n, line in enumerate(lines) if line.startswith((MINE_MARK, ">>>>>>> ")) or line == SPLIT_MARK]
    if marked:
        raise UnresolvedMerge(
            f"conflict markers left on line{'s' if len(marked) > 1 else ''} "
            f"{', '.join(map(str, marked[:6]))}: keep one side (or both) and delete the markers"
        )
    if like is None or isinstance(like, str):
        return text if text.strip() or like is not None else None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UnresolvedMerge(f"not valid JSON: {exc}") from None
    if isinstance(like, dict) and not isinstance(value, dict):
        raise UnresolvedMerge("must be a JSON object, as the field was")
    return value
