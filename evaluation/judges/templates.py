"""Judge prompt templates: versioned files, rendered into chat messages, hashed for caching.

A template is ``<judge>.v<version>.md`` in a benchmark plugin's ``judge_templates`` folder (chainmark's
own are in ``templates/`` here): a front-matter block (``key: value`` lines between
``---`` lines: parser, temperature, max_tokens, json) and then sections ``### system`` and
``### user``. In a section, ``{{name}}`` is replaced by a variable (lists are joined one per line,
numbered when the placeholder is ``{{name|numbered}}``); a line holding only ``{{images}}`` becomes
the request's images, and a line holding only ``{{parts:name}}`` becomes an interleaved list of
``{"type": "text"|"image", …}`` parts (ISG's holistic judge sees query, answer and golden this way).
Images not placed explicitly go first in the user message. A missing variable is an error naming
the template and the variable — a prompt is never sent half-filled.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from store.template_syntax import IMAGES_LINE

TEMPLATE_DIR = Path(__file__).with_name("templates")
_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][\w]*)(?:\|(numbered))?\s*\}\}")
_PARTS_LINE = re.compile(r"^\s*\{\{\s*parts:([a-zA-Z_]\w*)\s*\}\}\s*$")
_IMAGES_LINE = IMAGES_LINE  # one definition: a rubric is checked against the same syntax


class TemplateError(ValueError):
    """A template file is missing or malformed, or a variable it needs was not given."""


@dataclass(frozen=True)
class Template:
    judge: str
    version: str
    parser: str
    system: str
    user: str
    params: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    # Imported from a reference checkout (``judges import-prompts``): where the text came from, and
    # the user prompt is sent exactly as filled in (no trimming of blank lines).
    source: tuple[tuple[str, Any], ...] = ()
    verbatim: bool = False

    @property
    def ref(self) -> str:
        return f"{self.judge}.v{self.version}"

    def describe(self) -> str:
        """The template's name and, for an imported one, where its text was read."""
        if not self.source:
            return f"{self.ref} (chainmark's own prompt)"
        src = dict(self.source)
        if src.get("kind") == "authored":
            return f"{self.judge} v{self.version} (the rubric authored for benchmark {src.get('benchmark')!r})"
        rev = src.get("commit") or f"content {str(src.get('content_sha256', ''))[:12]}"
        dirty = ", modified" if src.get("dirty") else ""
        return f"{self.ref} (reference {src.get('file')}:{src.get('variable')} @ {str(rev)[:12]}{dirty})"


def template_dirs() -> list[Path]:
    """The folders templates are read from: this package's, then each benchmark plugin's
    ``judge_templates`` (``store.plugins``), each once."""
    from store.plugins import benchmark_plugins, resource_path

    dirs = [TEMPLATE_DIR]
    for plugin in benchmark_plugins():
        if plugin.judge_templates:
            folder = resource_path(plugin.judge_templates)
            if folder.resolve() not in {d.resolve() for d in dirs}:
                dirs.append(folder)
    return dirs


def _template_files(pattern: str) -> list[Path]:
    """Template files matching ``pattern``; a file name found in two folders is the first folder's
    (a plugin cannot replace chainmark's own prompt, or another plugin's, by reusing its name)."""
    found: dict[str, Path] = {}
    for folder in template_dirs():
        for path in sorted(folder.glob(pattern)):
            found.setdefault(path.name, path)
    return list(found.values())


def available() -> list[str]:
    """Judge names that have at least one template file."""
    return sorted({p.name.split(".v")[0] for p in _template_files("*.v*.md")})


@lru_cache(maxsize=64)
def load_template(judge: str, version: str | None = None) -> Template:
    """The template file of ``judge`` (the newest version unless one is named)."""
    files = sorted(_template_files(f"{judge}.v*.md"), key=lambda p: int(p.name.split(".v")[1].split(".")[0]))
    if version is not None:
        files = [p for p in files if p.name == f"{judge}.v{version}.md"]
    if not files:
        known = ", ".join(available()) or "none"
        raise TemplateError(
            f"no prompt template for judge {judge!r}"
            + (f" version {version}" if version else "")
            + f" (known judges: {known})"
        )
    path = files[-1]
    text = path.read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    if not m:
        raise TemplateError(f"{path.name}: must start with a '---' front-matter block")
    meta: dict[str, Any] = {}
    for line in m.group(1).splitlines():
        if line.strip():
            k, _, v = line.partition(":")
            meta[k.strip()] = _scalar(v.strip())
    sections = re.split(r"^### (system|user)\s*$", m.group(2), flags=re.M)
    parts = dict(zip(sections[1::2], (s.strip("\n") for s in sections[2::2])))
    if "user" not in parts:
        raise TemplateError(f"{path.name}: needs a '### user' section")
    for key in ("parser",):
        if key not in meta:
            raise TemplateError(f"{path.name}: front matter needs '{key}:'")
    params = {k: meta[k] for k in ("temperature", "max_tokens") if k in meta}
    if meta.get("json"):
        params["response_format"] = {"type": "json_object"}
    return Template(
        judge=judge,
        version=str(path.name.split(".v")[1].split(".")[0]),
        parser=str(meta["parser"]),
        system=parts.get("system", ""),
        user=parts["user"],
        params=params,
        path=str(path),
    )


def _scalar(v: str) -> Any:
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def _fill(tpl: Template, text: str, variables: dict[str, Any]) -> str:
    def sub(m: re.Match[str]) -> str:
        name, style = m.group(1), m.group(2)
        if name not in variables:
            raise TemplateError(f"template {tpl.ref} needs variable {name!r}; given: {', '.join(sorted(variables))}")
        value = variables[name]
        if isinstance(value, (list, tuple)):
            items = [str(v) for v in value]
            return "\n".join(f"{i + 1}. {v}" for i, v in enumerate(items)) if style == "numbered" else "\n".join(items)
        return "" if value is None else str(value)

    return _PLACEHOLDER.sub(sub, text)


ImageRef = Any  # an asset id or a file path; the caller resolves it


def render(
    tpl: Template, variables: dict[str, Any], images: list[ImageRef] | tuple[ImageRef, ...] = ()
) -> list[dict[str, Any]]:
    """Chat messages with image parts as ``{"type": "image", "ref": <ref>}`` (resolved later)."""
    messages: list[dict[str, Any]] = []
    if tpl.verbatim:
        if tpl.system:
            messages.append({"role": "system", "content": _fill(tpl, tpl.system, variables)})
        parts: list[dict[str, Any]] = [{"type": "image", "ref": ref} for ref in images]
        parts.append({"type": "text", "text": _fill(tpl, tpl.user, variables)})
        messages.append({"role": "user", "content": parts})
        return messages
    if tpl.system.strip():
        messages.append({"role": "system", "content": _fill(tpl, tpl.system, variables).strip()})
    content: list[dict[str, Any]] = []
    placed_images = False
    buffer: list[str] = []

    def flush() -> None:
        text = "\n".join(buffer).strip("\n")
        if text.strip():
            content.append({"type": "text", "text": _fill(tpl, text, variables)})
        buffer.clear()

    for line in tpl.user.split("\n"):
        pm = _PARTS_LINE.match(line)
        if pm:
            flush()
            name = pm.group(1)
            if name not in variables:
                raise TemplateError(f"template {tpl.ref} needs variable {name!r}")
            for part in variables[name] or []:
                if part.get("type") == "image":
                    content.append({"type": "image", "ref": part.get("ref")})
                else:
                    text = str(part.get("text") or part.get("content") or "")
                    if text:
                        content.append({"type": "text", "text": text})
        elif _IMAGES_LINE.match(line):
            flush()
            content.extend({"type": "image", "ref": ref} for ref in images)
            placed_images = True
        else:
            buffer.append(line)
    flush()
    if images and not placed_images:
        content = [{"type": "image", "ref": ref} for ref in images] + content
    messages.append({"role": "user", "content": content})
    return messages


def required_variables(tpl: Template) -> frozenset[str] | None:
    """The variables ``render`` fills for ``tpl`` (a missing one is its TemplateError), or None for a
    template with ``{{parts:…}}`` lines, whose variables only rendering can check."""
    if tpl.verbatim:
        texts = [tpl.system, tpl.user] if tpl.system else [tpl.user]
    else:
        lines = tpl.user.split("\n")
        if any(_PARTS_LINE.match(line) for line in lines):
            return None
        texts = [line for line in lines if not _IMAGES_LINE.match(line)]
        if tpl.system.strip():
            texts.append(tpl.system)
    return frozenset(m.group(1) for text in texts for m in _PLACEHOLDER.finditer(text))


def prompt_hash(tpl: Template, messages: list[dict[str, Any]], image_sha: Callable[[ImageRef], str]) -> str:
    """sha256 of template id + version + rendered messages with every image replaced by its content hash."""

    def canon(part: Any) -> Any:
        if isinstance(part, dict) and part.get("type") == "image":
            return {"type": "image", "sha256": image_sha(part["ref"])}
        return part

    body = [
        {
            "role": m["role"],
            "content": m["content"] if isinstance(m["content"], str) else [canon(p) for p in m["content"]],
        }
        for m in messages
    ]
    blob = json.dumps({"template": tpl.ref, "messages": body}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def row_template(row: Any, verbatim: bool) -> Template:
    """The Template of a stored JudgeTemplate row (an ORM object or a Core row with its columns);
    ``verbatim`` for a reference prompt, whose text is filled as the reference fills it."""
    return Template(
        judge=row.judge,
        version=row.version,
        parser=row.parser,
        system=row.system,
        user=row.user,
        params=dict(row.params or {}),
        path=f"judgetemplate:{row.id}",
        source=tuple(sorted((row.source or {}).items())),
        verbatim=verbatim,
    )
