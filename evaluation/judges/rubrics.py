"""The rubric judge's side of the rubrics a benchmark's author writes (``chainmark-rubric``).

Why: a benchmark in chainmark's own format grades its interleaved answers with a judge, and only the
author knows what a good answer to their tasks looks like. The versions are kept by ``store.rubrics``
(the chainmark format exports and imports them from there too); this module turns them into the
Templates a judge run sends. Judging uses the newest version (or the one asked for); without any,
chainmark's built-in template. The rubric's parser and sampling are the built-in template's, because
the native profile reads a 0–10 score.

Values are substituted in one pass (``templates.render``): a task or an answer that contains
``{{answer}}`` is sent as that text, never expanded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evaluation.judges.templates import Template, load_template, row_template
from store.core_tables import Reader
from store.rubrics import (
    ALLOWED,
    AUTHORED,
    NATIVE_FORMAT,
    RUBRIC_JUDGE,
    RubricError,
    authored_rows,
    benchmark_format,
    check_native,
    check_rubric,
    save_version,
    split_sections,
    unknown_placeholders,
)

if TYPE_CHECKING:
    from sqlmodel import Session

__all__ = [
    "ALLOWED",
    "AUTHORED",
    "NATIVE_FORMAT",
    "RUBRIC_JUDGE",
    "RubricError",
    "add_rubric",
    "authored_template",
    "check_rubric",
    "rubric_for",
    "rubric_text",
    "rubric_versions",
    "split_sections",
    "unknown_placeholders",
]


def authored_template(row: Any) -> Template:
    """The Template of an authored rubric row: the built-in's parser and sampling, the author's text
    (whatever an imported row says it was saved with)."""
    base = load_template(RUBRIC_JUDGE)
    return replace(row_template(row, verbatim=False), parser=base.parser, params=dict(base.params))


def rubric_versions(session: Reader, name: str) -> list[Template]:
    """Every authored version of the benchmark's rubric, oldest first (empty: the built-in is used)."""
    benchmark_format(session, name)
    return [authored_template(r) for r in authored_rows(session, name)]


def rubric_for(session: Reader, name: str, version: str | None = None) -> Template | None:
    """The benchmark's rubric: version ``version`` (a RubricError when there is none), else the newest;
    None when the author wrote none and no version was asked for."""
    rows = authored_rows(session, name)
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
    check_native(session, name)
    system, user = check_rubric(text)
    base = load_template(RUBRIC_JUDGE)
    row, new = save_version(session, name, system, user, author=author or "", parser=base.parser, params=base.params)
    return authored_template(row), new


def rubric_text(tpl: Template) -> str:
    """A rubric as the author writes it (what ``rubrics show`` prints and ``rubrics add`` reads back)."""
    if not tpl.system.strip():
        return tpl.user
    return f"### system\n{tpl.system}\n\n### user\n{tpl.user}"
