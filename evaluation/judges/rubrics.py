"""Rubrics a benchmark's author writes for its rubric judge (``chainmark-rubric``), versioned per benchmark.

Why: a benchmark in chainmark's own format grades its interleaved answers with a judge, and only the
author knows what a good answer to their tasks looks like. A rubric is a ``JudgeTemplate`` row (judge
``chainmark-rubric``, ``benchmark`` = the benchmark's name, ``source.kind`` = ``authored``); versions
are 1, 2, … and never edited: saving a changed text adds the next version. Judging uses the newest
version (or the one asked for); without any, chainmark's built-in template. The rubric's parser and
sampling are the built-in template's, because the native profile reads a 0–10 score.

A rubric's text is the user prompt (optionally ``### system`` and ``### user`` sections); only the
placeholders the rubric judge is given are allowed, so a typo is refused when the rubric is saved, not
when a judge run is half done. Values are substituted in one pass (``templates.render``): a task or an
answer that contains ``{{answer}}`` is sent as that text, never expanded.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from evaluation.judges.templates import _IMAGES_LINE, Template, load_template, row_template
from store.core_tables import Reader, benchmark, connection_of, judgetemplate

if TYPE_CHECKING:
    from sqlmodel import Session

RUBRIC_JUDGE = "chainmark-rubric"
AUTHORED = "authored"
NATIVE_FORMAT = "chainmark"
# What the native profile hands the rubric judge (evaluation.benchmarks.native.score_answer).
ALLOWED = ("query", "answer", "golden")
_ANY_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)
_NAMED = re.compile(r"^\s*(?:parts:)?([a-zA-Z_]\w*)(?:\|numbered)?\s*$")


class RubricError(ValueError):
    """A rubric cannot be saved or found; the message says why in one line."""


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
        if _IMAGES_LINE.match(line):
            continue
        for m in _ANY_PLACEHOLDER.finditer(line):
            named = _NAMED.match(m.group(1))
            if named is None or named.group(1) not in ALLOWED:
                bad.append(m.group(0))
    return list(dict.fromkeys(bad))


def check_rubric(text: str) -> tuple[str, str]:
    """The rubric's (system, user), or RubricError naming every unknown placeholder on one line."""
    if text.lstrip().startswith("---"):
        raise RubricError("a rubric has no front matter: its parser and sampling are the built-in rubric's")
    system, user = split_sections(text)
    if not user.strip():
        raise RubricError("the rubric's user prompt is empty")
    bad = unknown_placeholders(system + "\n" + user)
    if bad:
        allowed = ", ".join(f"{{{{{n}}}}}" for n in ALLOWED)
        raise RubricError(f"unknown placeholder(s) {', '.join(bad)}; a rubric may use {allowed}")
    return system, user


def _benchmark_format(session: Reader, name: str) -> str:
    b = benchmark.c
    row = connection_of(session).execute(sa.select(b.source_format).where(b.name == name)).first()
    if row is None:
        raise RubricError(f"no benchmark named {name!r}")
    return str(row.source_format)


def _authored_rows(session: Reader, name: str) -> list[Any]:
    """The benchmark's authored rubric rows, oldest first."""
    t = judgetemplate.c
    rows = connection_of(session).execute(
        sa.select(*judgetemplate.c).where(t.judge == RUBRIC_JUDGE, t.benchmark == name).order_by(t.id)
    )
    return [r for r in rows if (r.source or {}).get("kind") == AUTHORED]


def authored_template(row: Any) -> Template:
    """The Template of an authored rubric row: the built-in's parser and sampling, the author's text."""
    return row_template(row, verbatim=False)


def rubric_versions(session: Reader, name: str) -> list[Template]:
    """Every authored version of the benchmark's rubric, oldest first (empty: the built-in is used)."""
    _benchmark_format(session, name)
    return [authored_template(r) for r in _authored_rows(session, name)]


def rubric_for(session: Reader, name: str, version: str | None = None) -> Template | None:
    """The benchmark's rubric: version ``version`` (a RubricError when there is none), else the newest;
    None when the author wrote none and no version was asked for."""
    rows = _authored_rows(session, name)
    if version is None:
        return authored_template(rows[-1]) if rows else None
    wanted = version.lower().removeprefix("v")
    found = next((r for r in rows if r.version == wanted), None)
    if found is None:
        have = ", ".join(f"v{r.version}" for r in rows) or "none (the built-in rubric is used)"
        raise RubricError(f"benchmark {name!r} has no rubric version {version}; its versions: {have}")
    return authored_template(found)


def add_rubric(session: Session, name: str, text: str, author: str | None = None) -> tuple[Template, bool]:
    """Store ``text`` as the benchmark's next rubric version. (template, True), or the newest version and
    False when its text is already that (saving twice adds nothing)."""
    fmt = _benchmark_format(session, name)
    if fmt != NATIVE_FORMAT:
        raise RubricError(
            f"benchmark {name!r} is in the {fmt!r} format; authored rubrics are for chainmark-format benchmarks"
        )
    system, user = check_rubric(text)
    rows = _authored_rows(session, name)
    if rows and rows[-1].system == system and rows[-1].user == user:
        return authored_template(rows[-1]), False
    from store.models import JudgeTemplate  # the ORM only where rubrics are written

    base = load_template(RUBRIC_JUDGE)
    digest = hashlib.sha256(f"{system}\0{user}".encode()).hexdigest()
    row = JudgeTemplate(
        judge=RUBRIC_JUDGE,
        version=str(len(rows) + 1),
        parser=base.parser,
        system=system,
        user=user,
        params=dict(base.params),
        benchmark=name,
        source={"kind": AUTHORED, "benchmark": name, "author": author or "", "sha256": digest},
    )
    session.add(row)
    session.flush()
    return authored_template(row), True


def rubric_text(tpl: Template) -> str:
    """A rubric as the author writes it (what ``rubrics show`` prints and ``rubrics add`` reads back)."""
    if not tpl.system.strip():
        return tpl.user
    return f"### system\n{tpl.system}\n\n### user\n{tpl.user}"
