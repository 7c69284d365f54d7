"""Where the judge rubrics a benchmark's author writes are kept: one ``judgetemplate`` row per version.

Why here: the rubric judge (``evaluation.judges.rubrics``) reads them, and chainmark's own dataset
format (``annotation.formats.chainmark``) exports and imports them with the benchmark; neither may
import the other, so reading, writing and checking a rubric version live in this one module below both.

A version is a row with judge ``chainmark-rubric``, ``benchmark`` = the benchmark's name and
``source.kind`` = ``authored``. Versions are 1, 2, … and never edited: saving a changed text adds the
next one, saving the newest text again adds nothing. A rubric's text is the judge's user prompt
(optionally ``### system`` and ``### user`` sections) and may only use the placeholders the rubric
judge is given, so a typo is refused when the rubric is saved or imported, not mid-way through a judge run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from store.clock import as_utc, utcnow
from store.template_syntax import IMAGES_LINE
from store.core_tables import Reader, benchmark, connection_of, judgetemplate

RUBRIC_JUDGE = "chainmark-rubric"
AUTHORED = "authored"
NATIVE_FORMAT = "chainmark"
# What the native profile hands the rubric judge (evaluation.benchmarks.native.score_answer).
ALLOWED = ("query", "answer", "golden")
_ANY_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)
_NAMED = re.compile(r"^\s*(?:parts:)?([a-zA-Z_]\w*)(?:\|numbered)?\s*$")


class RubricError(ValueError):
    """A rubric cannot be saved or found; the message says why in one line."""


@dataclass(frozen=True)
class RubricVersion:
    """One stored version as it travels between databases (an export line): its text, who saved it
    and when, and the parser and sampling it was saved with."""

    version: str
    system: str
    user: str
    author: str
    created_at: datetime
    parser: str
    params: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ checking a text


def split_sections(text: str) -> tuple[str, str]:
    """(system, user) of a rubric text: its ``### system`` / ``### user`` sections, or all of it as user."""
    parts = re.split(r"^### (system|user)\s*$", text, flags=re.M)
    if len(parts) == 1:
        return "", text.strip("\n")
    found = dict(zip(parts[1::2], (s.strip("\n") for s in parts[2::2])))
    if parts[0].strip():
        raise RubricError("text before the first '### system' / '### user' heading; put it in a section")
    return found.get("system", ""), found.get("user", "")


def unknown_placeholders(text: str) -> list[str]:
    """Placeholders in ``text`` that the rubric judge is not given (``{{images}}`` lines are allowed)."""
    bad = []
    for line in text.split("\n"):
        if IMAGES_LINE.match(line):
            continue
        for m in _ANY_PLACEHOLDER.finditer(line):
            named = _NAMED.match(m.group(1))
            if named is None or named.group(1) not in ALLOWED:
                bad.append(m.group(0))
    return list(dict.fromkeys(bad))


def placeholder_problem(text: str) -> str | None:
    """What is wrong with the placeholders of ``text`` in one line, or None when the judge is given them all."""
    bad = unknown_placeholders(text)
    if not bad:
        return None
    allowed = ", ".join(f"{{{{{n}}}}}" for n in ALLOWED)
    return f"unknown placeholder(s) {', '.join(bad)}; a rubric may use {allowed}"


def check_prompts(system: str, user: str) -> None:
    """RubricError when the user prompt is empty or either part names a placeholder the judge lacks."""
    if not user.strip():
        raise RubricError("the rubric's user prompt is empty")
    problem = placeholder_problem(system + "\n" + user)
    if problem:
        raise RubricError(problem)


def check_rubric(text: str) -> tuple[str, str]:
    """The rubric's (system, user), or RubricError naming every unknown placeholder on one line."""
    if text.lstrip().startswith("---"):
        raise RubricError("a rubric has no front matter: its parser and sampling are the built-in rubric's")
    system, user = split_sections(text)
    check_prompts(system, user)
    return system, user


# ------------------------------------------------------------------ reading


def benchmark_format(reader: Reader, name: str) -> str:
    """The benchmark's source format; RubricError when there is no such benchmark."""
    b = benchmark.c
    row = connection_of(reader).execute(sa.select(b.source_format).where(b.name == name)).first()
    if row is None:
        raise RubricError(f"no benchmark named {name!r}")
    return str(row.source_format)


def authored_rows(reader: Reader, name: str) -> list[Any]:
    """The benchmark's authored rubric rows (every ``judgetemplate`` column), oldest first."""
    t = judgetemplate.c
    rows = connection_of(reader).execute(
        sa.select(*judgetemplate.c).where(t.judge == RUBRIC_JUDGE, t.benchmark == name).order_by(t.id)
    )
    return [r for r in rows if (r.source or {}).get("kind") == AUTHORED]


def _as_version(row: Any) -> RubricVersion:
    return RubricVersion(
        version=str(row.version),
        system=row.system,
        user=row.user,
        author=str((row.source or {}).get("author") or ""),
        created_at=as_utc(row.created_at),
        parser=row.parser,
        params=dict(row.params or {}),
    )


def stored_versions(reader: Reader, name: str) -> list[RubricVersion]:
    """Every version of the benchmark's rubric, oldest first, as an export writes them."""
    return [_as_version(r) for r in authored_rows(reader, name)]


# ------------------------------------------------------------------ writing


def _insert(reader: Reader, name: str, v: RubricVersion) -> Any:
    """Write ``v`` as a row of benchmark ``name``; the row as ``authored_rows`` reads it."""
    digest = hashlib.sha256(f"{v.system}\0{v.user}".encode()).hexdigest()
    conn = connection_of(reader)
    conn.execute(
        judgetemplate.insert().values(
            judge=RUBRIC_JUDGE,
            version=v.version,
            parser=v.parser,
            system=v.system,
            user=v.user,
            params=dict(v.params),
            benchmark=name,
            source={"kind": AUTHORED, "benchmark": name, "author": v.author, "sha256": digest},
            created_at=v.created_at,
        )
    )
    return authored_rows(reader, name)[-1]


def check_native(reader: Reader, name: str) -> None:
    """RubricError unless the benchmark exists and is in chainmark's own format (the only one rubrics are for)."""
    fmt = benchmark_format(reader, name)
    if fmt != NATIVE_FORMAT:
        raise RubricError(
            f"benchmark {name!r} is in the {fmt!r} format; authored rubrics are for chainmark-format benchmarks"
        )


def save_version(
    reader: Reader, name: str, system: str, user: str, *, author: str, parser: str, params: dict[str, Any]
) -> tuple[Any, bool]:
    """Store (system, user) as the benchmark's next version: (its row, True), or the newest row and
    False when that already has this text (saving twice adds nothing)."""
    check_native(reader, name)
    check_prompts(system, user)
    rows = authored_rows(reader, name)
    if rows and rows[-1].system == system and rows[-1].user == user:
        return rows[-1], False
    made = RubricVersion(str(len(rows) + 1), system, user, author, utcnow(), parser, dict(params))
    return _insert(reader, name, made), True


def restore_version(reader: Reader, name: str, v: RubricVersion) -> bool:
    """Bring version ``v`` (read from an export) into the benchmark as it was stored there: True when
    written, False when the benchmark already holds that version with that text. RubricError when it
    holds a different text under that number, or ``v`` is not the next number (versions are never edited)."""
    check_native(reader, name)
    check_prompts(v.system, v.user)
    rows = authored_rows(reader, name)
    same = next((r for r in rows if r.version == v.version), None)
    if same is not None:
        if (same.system, same.user) != (v.system, v.user):
            raise RubricError(
                f"benchmark {name!r} already has a different rubric v{v.version}; versions are never edited"
            )
        return False
    if v.version != str(len(rows) + 1):
        raise RubricError(
            f"is v{v.version}, but benchmark {name!r} has {len(rows)} version(s): the next is v{len(rows) + 1}"
        )
    _insert(reader, name, v)
    return True
