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

from pydantic import ValidationError

from store.schemas import ANSWER_KINDS, SpecProblem, answer_spec_adapter, field_path

KINDS = ANSWER_KINDS


class AnswerSpecError(ValueError):
    """The answer spec is not valid; ``field`` names the offending part."""

    def __init__(self, field: str, message: str):
        super().__init__(f"answer spec {field}: {message}")
        self.field = field


def validate_answer_spec(spec: Any) -> dict[str, Any]:
    """Return the spec if valid, else raise AnswerSpecError naming the field and what to do.

    The shapes are ``store.schemas``' models (also ``chainmark schema answers``); this turns their
    first complaint into one field path and one message."""
    if not isinstance(spec, dict):
        raise AnswerSpecError("kind", f"must be an object with a 'kind' field, got {type(spec).__name__}")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise AnswerSpecError("kind", f"must be one of {', '.join(KINDS)}; got {kind!r}")
    try:
        answer_spec_adapter.validate_python(spec)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = field_path(err["loc"][1:])  # [0] is the kind the union picked
        problem = (err.get("ctx") or {}).get("error")
        if isinstance(problem, SpecProblem):
            joiner = "." if field and problem.where[:1].isalpha() else ""
            raise AnswerSpecError(field + joiner + problem.where, problem.message) from None
        raise AnswerSpecError(field or "kind", err["msg"][0].lower() + err["msg"][1:]) from None
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
