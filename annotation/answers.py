"""Answer specs: a tagged union stored as JSON on the task, validated with messages a person can act on.

Kinds (``{"kind": …}``):
- ``whitelist``: ``groups`` (list of alias lists; every group must match) and ``blacklist`` (list of
  alias lists or null) — GTA objective answers.
- ``references``: ``references`` (list of reference strings) — GTA subjective answers (cosine).
- ``exact`` | ``contains`` | ``numeric``: ``value`` plus optional ``tolerance`` and ``variants``.
- ``mcq``: ``options`` ({letter: text}) and ``letter`` — VTC multiple choice.
- ``interleaved``: ``golden`` (list of ``{"type": "text"|"image", "content": str}``) — ISG.
- ``none``: no textual answer (image generation, ATP plan-only).
"""

from __future__ import annotations

from typing import Any

KINDS = ("whitelist", "references", "exact", "contains", "numeric", "mcq", "interleaved", "none")


class AnswerSpecError(ValueError):
    """The answer spec is not valid; ``field`` names the offending part."""

    def __init__(self, field: str, message: str):
        super().__init__(f"answer spec {field}: {message}")
        self.field = field


def _alias_groups(value: Any, field: str, *, allow_null: bool) -> None:
    if value is None and allow_null:
        return
    if not isinstance(value, list) or not value:
        raise AnswerSpecError(field, "must be a non-empty list of alias lists, e.g. [[\"58\", \"fifty-eight\"]]")
    for i, group in enumerate(value):
        if not isinstance(group, list) or not group:
            raise AnswerSpecError(f"{field}[{i}]", "must be a non-empty list of strings")
        for j, alias in enumerate(group):
            if not isinstance(alias, str) or not alias.strip():
                raise AnswerSpecError(f"{field}[{i}][{j}]", "must be a non-empty string")


def validate_answer_spec(spec: Any) -> dict[str, Any]:
    """Return the spec if valid, else raise AnswerSpecError naming the field and what to do."""
    if not isinstance(spec, dict):
        raise AnswerSpecError("kind", f"must be an object with a 'kind' field, got {type(spec).__name__}")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise AnswerSpecError("kind", f"must be one of {', '.join(KINDS)}; got {kind!r}")
    if kind == "whitelist":
        _alias_groups(spec.get("groups"), "groups", allow_null=False)
        _alias_groups(spec.get("blacklist"), "blacklist", allow_null=True)
    elif kind == "references":
        refs = spec.get("references")
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r.strip() for r in refs):
            raise AnswerSpecError("references", "must be a non-empty list of non-empty strings")
    elif kind in ("exact", "contains", "numeric"):
        value = spec.get("value")
        if value is None or (isinstance(value, str) and not value.strip()):
            raise AnswerSpecError("value", f"is required for a {kind} answer")
        if kind == "numeric":
            try:
                float(value)
            except (TypeError, ValueError):
                raise AnswerSpecError("value", f"must be a number for a numeric answer; got {value!r}") from None
        tol = spec.get("tolerance")
        if tol is not None and (not isinstance(tol, (int, float)) or isinstance(tol, bool) or tol < 0):
            raise AnswerSpecError("tolerance", f"must be a non-negative number; got {tol!r}")
        variants = spec.get("variants")
        if variants is not None and (not isinstance(variants, list) or not all(isinstance(v, str) for v in variants)):
            raise AnswerSpecError("variants", "must be a list of strings")
    elif kind == "mcq":
        options = spec.get("options")
        if not isinstance(options, dict) or len(options) < 2:
            raise AnswerSpecError("options", "must map at least two letters to option texts, e.g. {\"A\": \"3\", \"B\": \"4\"}")
        for letter, text in options.items():
            if not (isinstance(letter, str) and len(letter) == 1 and letter.isalpha()):
                raise AnswerSpecError(f"options.{letter}", "option keys must be single letters")
            if not isinstance(text, str):
                raise AnswerSpecError(f"options.{letter}", "option text must be a string")
        letter = spec.get("letter")
        if letter not in options:
            raise AnswerSpecError("letter", f"must be one of the option letters {sorted(options)}; got {letter!r}")
    elif kind == "interleaved":
        golden = spec.get("golden")
        if not isinstance(golden, list) or not golden:
            raise AnswerSpecError("golden", "must be a non-empty list of {type, content} blocks")
        for i, block in enumerate(golden):
            if not isinstance(block, dict) or block.get("type") not in ("text", "image"):
                raise AnswerSpecError(f"golden[{i}].type", "must be 'text' or 'image'")
            if not isinstance(block.get("content"), str):
                raise AnswerSpecError(f"golden[{i}].content", "must be a string (text or image path)")
    return spec


def describe(spec: dict[str, Any]) -> str:
    """A one-line human summary of an answer spec, for lists and the TUI."""
    kind = spec.get("kind", "none")
    if kind == "whitelist":
        return " & ".join("/".join(g) for g in spec.get("groups") or [])
    if kind == "references":
        refs = spec.get("references") or []
        return f"≈ {refs[0]}" + (f" (+{len(refs) - 1})" if len(refs) > 1 else "")
    if kind in ("exact", "contains"):
        return f"{kind}: {spec.get('value')}"
    if kind == "numeric":
        tol = spec.get("tolerance")
        return f"{spec.get('value')}" + (f" ± {tol}" if tol else "")
    if kind == "mcq":
        letter = spec.get("letter")
        return f"{letter}. {(spec.get('options') or {}).get(letter, '')}"
    if kind == "interleaved":
        return f"{len(spec.get('golden') or [])} golden blocks"
    return "—"
