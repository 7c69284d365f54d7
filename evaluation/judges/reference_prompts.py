"""Judge prompts read from the user's own checkout of a reference repository, never shipped with chainmark.

Why: judged metrics only match a paper when the judge sees the paper's prompt text, and that text is
not ours to copy. A profile names where each prompt lives (``PromptSource``: file, enclosing
class/function, variable, which assignment); ``import_prompts`` reads it with ``ast`` (the file is
never executed), turns its ``str.format`` fields into template variables, and stores it as a
versioned ``JudgeTemplate`` row with the checkout's commit (or a content hash when it is not a git
work tree). Faithful scoring and judging then use the newest imported version (``template_for``).
"""

from __future__ import annotations

import ast
import hashlib
import string
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from evaluation.judges.templates import _PLACEHOLDER, Template, load_template, row_template
from store.core_tables import Reader, connection_of, judgetemplate

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.models import JudgeTemplate


class PromptImportError(ValueError):
    """The checkout does not hold the prompt where the profile says it is."""


@dataclass(frozen=True)
class PromptSource:
    """Where one judge prompt lives in a reference repository, and how its format fields are named."""

    judge: str  # chainmark judge name
    file: str  # path inside the checkout
    scope: str  # dotted class/function path enclosing the assignment ("" for module level)
    variable: str
    fields: tuple[str, ...]  # template variable for each positional field ({} / {0}), in order
    occurrence: int = 0  # which assignment to ``variable`` in that scope, in source order
    role: str = "user"  # user | system
    parser: str = ""  # defaults to the judge's own template parser
    params: dict[str, Any] = field(default_factory=dict)  # sampling the reference uses for this judge
    # For a message the reference builds in code rather than keeping in a variable (e.g. the user turn
    # is just the question): chainmark's own layout of it, in template syntax; nothing is read.
    layout: str | None = None

    @property
    def where(self) -> str:
        if self.layout is not None:
            return "(built in code)"
        scope = f"{self.scope}." if self.scope else ""
        return f"{scope}{self.variable}" + (f"#{self.occurrence + 1}" if self.occurrence else "")


# ------------------------------------------------------------------ reading


def _scope_node(tree: ast.Module, scope: str, file: str) -> ast.AST:
    node: ast.AST = tree
    for name in [s for s in scope.split(".") if s]:
        found = next((n for n in _walk_defs(node) if n.name == name), None)
        if found is None:
            raise PromptImportError(f"{file}: no class or function {name!r} in {scope!r}")
        node = found
    return node


def _walk_defs(node: ast.AST):  # type: ignore[no-untyped-def]
    """Class/function definitions directly inside ``node`` (looking through if/for/with/try blocks)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child
        elif not isinstance(child, ast.Lambda):
            yield from _walk_defs(child)


def _assignments(node: ast.AST, variable: str) -> list[ast.AST]:
    """Values assigned to ``variable`` in this scope (not in nested definitions), in source order."""
    out: list[ast.AST] = []

    def visit(n: ast.AST) -> None:
        for child in ast.iter_child_nodes(n):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == variable for t in child.targets
            ):
                out.append(child.value)
            elif (
                isinstance(child, ast.AnnAssign)
                and isinstance(child.target, ast.Name)
                and child.target.id == variable
                and child.value is not None
            ):
                out.append(child.value)
            visit(child)

    visit(node)
    return sorted(out, key=lambda v: (getattr(v, "lineno", 0), getattr(v, "col_offset", 0)))


def _string_value(node: ast.AST, where: str) -> str:
    """A string literal, implicitly or explicitly concatenated (``"a" "b"``, ``"a" + "b"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string_value(node.left, where) + _string_value(node.right, where)
    raise PromptImportError(f"{where} is not a plain string literal (it is computed when the code runs)")


def read_prompt(checkout: Path, src: PromptSource) -> str:
    """The literal text of ``src`` in ``checkout`` (format fields still in ``str.format`` syntax)."""
    path = checkout / src.file
    if not path.is_file():
        raise PromptImportError(f"{path}: not found (is {checkout} a checkout of the reference repository?)")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise PromptImportError(f"{path}: cannot be parsed as Python: {exc.msg} (line {exc.lineno})") from None
    values = _assignments(_scope_node(tree, src.scope, src.file), src.variable)
    if len(values) <= src.occurrence:
        raise PromptImportError(
            f"{src.file}: {src.where} not found ({len(values)} assignment(s) to "
            f"{src.variable!r} in {src.scope or 'the module'})"
        )
    return _string_value(values[src.occurrence], f"{src.file}: {src.where}")


def to_template_text(text: str, src: PromptSource) -> str:
    """``str.format`` syntax → chainmark placeholders; the literal text is kept exactly."""
    out: list[str] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise PromptImportError(f"{src.file}: {src.where}: not a format string ({exc})") from None
    for literal, name, spec, conversion in parsed:
        if _PLACEHOLDER.search(literal):
            raise PromptImportError(
                f"{src.file}: {src.where}: the text itself contains '{{{{name}}}}', which "
                "chainmark templates would read as a variable"
            )
        out.append(literal)
        if name is None:
            continue
        if spec or conversion:
            raise PromptImportError(f"{src.file}: {src.where}: field {{{name}}} has a format spec; not supported")
        if name == "":
            index = auto
            auto += 1
        elif name.isdigit():
            index = int(name)
        else:
            out.append(f"{{{{{name}}}}}")
            continue
        if index >= len(src.fields):
            raise PromptImportError(
                f"{src.file}: {src.where}: has more fields than the {len(src.fields)} "
                f"chainmark knows ({', '.join(src.fields)}); the reference changed"
            )
        out.append(f"{{{{{src.fields[index]}}}}}")
    return "".join(out)


def checkout_revision(checkout: Path, files: list[str]) -> dict[str, Any]:
    """The checkout's commit (and whether the prompt files differ from it), else a content hash."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain", "--", *files],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
        if commit:
            return {"commit": commit, "dirty": bool(status)}
    except (OSError, subprocess.SubprocessError):
        pass
    digest = hashlib.sha256()
    for f in sorted(set(files)):
        digest.update(f.encode() + b"\0" + (checkout / f).read_bytes() + b"\0")
    return {"commit": None, "content_sha256": digest.hexdigest()}


# ------------------------------------------------------------------ storing and choosing


def import_prompts(
    session: Session, benchmark: str, checkout: Path, sources: list[PromptSource]
) -> list[dict[str, Any]]:
    """Read every prompt of ``sources`` (all or nothing) and store new template versions; a re-import of
    the same text from the same revision adds nothing. Returns one summary per judge."""
    checkout = checkout.expanduser().resolve()
    if not checkout.is_dir():
        raise PromptImportError(f"{checkout}: not a directory")
    by_judge: dict[str, list[PromptSource]] = {}
    for src in sources:
        by_judge.setdefault(src.judge, []).append(src)
    revision = checkout_revision(checkout, sorted({s.file for s in sources}))
    prepared = []
    for judge, srcs in by_judge.items():
        texts = {"system": "", "user": ""}
        for src in srcs:
            texts[src.role] = (
                src.layout if src.layout is not None else to_template_text(read_prompt(checkout, src), src)
            )
        base = load_template(judge)
        first = next(s for s in srcs if s.layout is None)
        params = {**base.params, **first.params}
        source = {
            "repository": str(checkout),
            **revision,
            "file": first.file,
            "variable": ", ".join(f"{s.role}={s.where}" for s in srcs),
        }
        prepared.append((judge, texts, first.parser or base.parser, params, source))
    from sqlmodel import select  # the ORM only where templates are imported, not where they are read

    from store.models import JudgeTemplate

    out = []
    for judge, texts, parser, params, source in prepared:
        rows = session.exec(select(JudgeTemplate).where(JudgeTemplate.judge == judge).order_by(JudgeTemplate.id)).all()  # type: ignore[arg-type]
        same = next(
            (
                r
                for r in rows
                if r.system == texts["system"]
                and r.user == texts["user"]
                and r.parser == parser
                and r.params == params
                and {k: r.source.get(k) for k in ("commit", "content_sha256", "dirty")}
                == {k: source.get(k) for k in ("commit", "content_sha256", "dirty")}
            ),
            None,
        )
        if same is not None and same.id == rows[-1].id:
            out.append({"judge": judge, "version": same.version, "new": False, "source": same.source})
            continue
        version = f"ref{len(rows) + 1}"
        session.add(
            JudgeTemplate(
                judge=judge,
                version=version,
                parser=parser,
                system=texts["system"],
                user=texts["user"],
                params=params,
                benchmark=benchmark,
                source=source,
            )
        )
        out.append({"judge": judge, "version": version, "new": True, "source": source})
    session.flush()
    return out


def imported_template(row: "JudgeTemplate | Any") -> Template:
    """The Template of an imported reference prompt's row, filled as the reference fills it."""
    return row_template(row, verbatim=True)


def template_for(
    session: Reader | None, judge: str, mode: str = "faithful", benchmark: str | None = None, version: str | None = None
) -> Template:
    """The template ``judge``'s questions about ``benchmark`` are asked with: the benchmark's authored
    rubric (``evaluation.judges.rubrics``; version ``version``, else its newest) in either mode; else,
    faithful, the newest imported reference prompt of ``judge``; else chainmark's own template file."""
    from evaluation.judges.rubrics import RUBRIC_JUDGE, rubric_for

    if judge == RUBRIC_JUDGE and session is not None and benchmark:
        authored = rubric_for(session, benchmark, version)
        if authored is not None:
            return authored
    if mode == "faithful" and session is not None:
        t = judgetemplate
        rows = connection_of(session).execute(sa.select(*t.c).where(t.c.judge == judge).order_by(t.c.id.desc()))
        row = next((r for r in rows if (r.source or {}).get("kind") != "authored"), None)
        if row is not None:
            return imported_template(row)
    return load_template(judge)
