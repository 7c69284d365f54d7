"""Typed shapes of the JSON chainmark stores: answer specs, checkpoint checks and event payloads.

The database keeps these as JSON columns (other harnesses' records carry extra keys, which are kept);
these pydantic models are the one definition the validators use and ``chainmark schema`` prints as
JSON Schema, so tools written against chainmark's data have a contract. ``SCHEMA_VERSION`` changes
whenever a shape changes incompatibly.

Validators raise ``SpecProblem`` (where inside the field, what to do) so a caller can name the exact
offending part in words a person acts on; ``annotation.answers`` turns them into ``AnswerSpecError``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationInfo, model_validator

SCHEMA_VERSION = 1


class SpecProblem(ValueError):
    """A value that does not fit; ``where`` continues the field path (``"[0][1]"``, ``".AB"``, ``"letter"``)."""

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.message = message
        self.where = where


class _Open(BaseModel):
    """Stored records may carry keys of their source harness: kept, not refused."""

    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------- answer specs


def _kept_as_read(info: ValidationInfo) -> bool:
    """An imported spec the source's own evaluator scores as it stands (``as_read`` names its oddities):
    empty alias lists or strings are kept, so the scorer reads them as the reference does."""
    return bool((info.data or {}).get("as_read"))


def _alias_groups(value: Any, info: ValidationInfo) -> Any:
    if value is None and info.field_name == "blacklist":
        return value
    if _kept_as_read(info):
        if not isinstance(value, list) or not all(
            isinstance(g, list) and all(isinstance(a, str) for a in g) for g in value
        ):
            raise SpecProblem("must be a list of lists of strings")
        return value
    if not isinstance(value, list) or not value:
        raise SpecProblem('must be a non-empty list of alias lists, e.g. [["58", "fifty-eight"]]')
    for i, group in enumerate(value):
        if not isinstance(group, list) or not group:
            raise SpecProblem("must be a non-empty list of strings", f"[{i}]")
        for j, alias in enumerate(group):
            if not isinstance(alias, str) or not alias.strip():
                raise SpecProblem("must be a non-empty string", f"[{i}][{j}]")
    return value


def _references(value: Any, info: ValidationInfo) -> Any:
    if _kept_as_read(info) and isinstance(value, list) and all(isinstance(r, str) for r in value):
        return value
    if not isinstance(value, list) or not value or not all(isinstance(r, str) and r.strip() for r in value):
        raise SpecProblem("must be a non-empty list of non-empty strings")
    return value


def _tolerance(value: Any) -> Any:
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0):
        raise SpecProblem(f"must be a non-negative number; got {value!r}")
    return value


def _variants(value: Any) -> Any:
    if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
        raise SpecProblem("must be a list of strings")
    return value


def _options(value: Any) -> Any:
    if not isinstance(value, dict) or len(value) < 2:
        raise SpecProblem('must map at least two letters to option texts, e.g. {"A": "3", "B": "4"}')
    for letter, text in value.items():
        if not (isinstance(letter, str) and len(letter) == 1 and letter.isalpha()):
            raise SpecProblem("option keys must be single letters", f".{letter}")
        if not isinstance(text, str):
            raise SpecProblem("option text must be a string", f".{letter}")
    return value


def _golden(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise SpecProblem("must be a non-empty list of {type, content} blocks")
    for i, block in enumerate(value):
        if not isinstance(block, dict) or block.get("type") not in ("text", "image"):
            raise SpecProblem("must be 'text' or 'image'", f"[{i}].type")
        if not isinstance(block.get("content"), str):
            raise SpecProblem("must be a string (text or image path)", f"[{i}].content")
    return value


AliasGroups = Annotated[list[list[str]], BeforeValidator(_alias_groups)]


class _ImportedAnswer(_Open):
    """``as_read``: why an imported spec is kept although an author could not write it (empty aliases, no
    references); set only by importers, each line one oddity and how the reference reads it."""

    as_read: list[str] | None = None


class WhitelistAnswer(_ImportedAnswer):
    """GTA objective answers: every group must match one of its aliases; no blacklist group may."""

    kind: Literal["whitelist"]
    groups: AliasGroups
    blacklist: Annotated[list[list[str]] | None, BeforeValidator(_alias_groups)] = None


class ReferencesAnswer(_ImportedAnswer):
    """GTA subjective answers: cosine similarity to the closest reference."""

    kind: Literal["references"]
    references: Annotated[list[str], BeforeValidator(_references)]


class ValueAnswer(_Open):
    """``exact``, ``contains`` or ``numeric`` (within ``tolerance``), with accepted ``variants``."""

    kind: Literal["exact", "contains", "numeric"]
    value: Any = None
    tolerance: Annotated[float | None, BeforeValidator(_tolerance)] = None
    variants: Annotated[list[str] | None, BeforeValidator(_variants)] = None

    @model_validator(mode="after")
    def _value_present(self) -> ValueAnswer:
        value = self.value
        if value is None or (isinstance(value, str) and not value.strip()):
            raise SpecProblem(f"is required for a {self.kind} answer", "value")
        if self.kind == "numeric":
            try:
                float(value)
            except (TypeError, ValueError):
                raise SpecProblem(f"must be a number for a numeric answer; got {value!r}", "value") from None
        return self


class McqAnswer(_Open):
    """VTC multiple choice: ``options`` by letter and the right ``letter``."""

    kind: Literal["mcq"]
    options: Annotated[dict[str, str], BeforeValidator(_options)]
    letter: Any = None

    @model_validator(mode="after")
    def _letter_is_an_option(self) -> McqAnswer:
        if self.letter not in self.options:
            raise SpecProblem(
                f"must be one of the option letters {sorted(self.options)}; got {self.letter!r}", "letter"
            )
        return self


class GoldenBlock(_Open):
    type: Literal["text", "image"]
    content: str


class InterleavedAnswer(_Open):
    """ISG: the golden interleaved text and image blocks."""

    kind: Literal["interleaved"]
    golden: Annotated[list[GoldenBlock], BeforeValidator(_golden)]


class NoAnswer(_Open):
    """No textual answer (image generation, ATP plan-only)."""

    kind: Literal["none"]


AnswerSpec = Annotated[
    Union[WhitelistAnswer, ReferencesAnswer, ValueAnswer, McqAnswer, InterleavedAnswer, NoAnswer],
    Field(discriminator="kind"),
]
ANSWER_KINDS = ("whitelist", "references", "exact", "contains", "numeric", "mcq", "interleaved", "none")
answer_spec_adapter: TypeAdapter[Any] = TypeAdapter(AnswerSpec)


# ---------------------------------------------------------------- checkpoint checks


class CodeCheck(_Open):
    """Agentic-MME S: the tool (operation) the trajectory must use, and how its code is verified."""

    tool: str | None = None
    verifier: str | None = None


class VisualCheck(_Open):
    """Agentic-MME V: a question a judge answers on the produced image, and the expected answer."""

    question: str
    expected_answer: str


class SearchCheck(_Open):
    """Agentic-MME R: what the trajectory's searches must find."""

    keywords: list[str] = []
    urls: list[str] = []
    expected_answer: str | None = None


class AnswerCheck(_Open):
    """A check on the final answer (``match_type`` exact, contains, numeric …)."""

    match_type: str
    target: Any = None
    tolerance: float | None = None
    keywords: list[str] | None = None


class CheckpointChecks(_Open):
    """One checkpoint as stored (``Checkpoint`` row): its axis, the tools it concerns and its checks."""

    key: str
    axis: str = "V"
    description: str | None = None
    tools: list[str] = []
    code_check: CodeCheck | None = None
    visual_check: VisualCheck | None = None
    search_check: SearchCheck | None = None
    answer_check: AnswerCheck | None = None
    weight: float = 1.0


# ---------------------------------------------------------------- event payloads (see store.events)


class ToolCallSeen(_Open):
    id: str | None = None
    name: str
    arguments: str | None = None
    parsed: dict[str, Any] | None = None


class UserMessagePayload(_Open):
    role: str = "user"
    content: str | list[Any]


class ModelMessagePayload(_Open):
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCallSeen] = []
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None


class ToolCallPayload(_Open):
    call_id: str = ""
    name: str
    arguments: dict[str, Any] | Any
    raw_name: str | None = None


class ToolResultPayload(_Open):
    call_id: str = ""
    name: str
    ok: bool
    text: str
    data: dict[str, Any] = {}
    asset_ids: list[int] = []
    image_index: int | None = None
    error: str | None = None


class CodeOp(_Open):
    op: str
    save: Any = None
    line: int | None = None


class CodeExecPayload(_Open):
    code: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    killed_reason: str | None = None
    ops: list[CodeOp] = []
    asset_ids: list[int] = []


class PlanCallPayload(_Open):
    tool_name: str | None = None
    description: str | None = None
    params: Any = None
    raw: str = ""
    valid: bool
    error: str | None = None
    position: int | None = None


class StepPredictionPayload(_Open):
    gold_index: int
    prediction: dict[str, Any]


class AnswerPayload(_Open):
    text: str
    raw: str | None = None
    extracted_by: str = "raw"


class ErrorPayload(_Open):
    type: str
    message: str


EVENT_PAYLOADS: dict[str, type[BaseModel]] = {
    "user_message": UserMessagePayload,
    "model_message": ModelMessagePayload,
    "tool_call": ToolCallPayload,
    "tool_result": ToolResultPayload,
    "code_exec": CodeExecPayload,
    "plan_call": PlanCallPayload,
    "step_prediction": StepPredictionPayload,
    "answer": AnswerPayload,
    "error": ErrorPayload,
}


def event_problems(kind: str, payload: Any) -> list[str]:
    """What is wrong with one event's payload, as ``field: message`` lines (empty when it fits)."""
    model = EVENT_PAYLOADS.get(kind)
    if model is None:
        return [f"kind: {kind!r} is not an event kind ({', '.join(EVENT_PAYLOADS)})"]
    from pydantic import ValidationError

    try:
        model.model_validate(payload)
    except ValidationError as exc:
        return [f"{field_path(err['loc'])}: {err['msg']}" for err in exc.errors()]
    return []


def field_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("groups", 0, 1)`` → ``groups[0][1]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _event_records() -> Any:
    """``{kind, payload}`` for each kind, as one discriminated union (one JSON Schema with shared $defs)."""
    from pydantic import create_model

    fields: dict[str, Any] = {}
    records = [
        create_model(
            f"{model.__name__.removesuffix('Payload')}Event",
            **{**fields, "kind": (Literal[kind], ...), "payload": (model, ...)},
        )
        for kind, model in EVENT_PAYLOADS.items()
    ]
    return Annotated[Union[tuple(records)], Field(discriminator="kind")]


class _Closed(BaseModel):
    """A line of chainmark's own folder format: only its own keys (the reader refuses others)."""

    model_config = ConfigDict(extra="forbid")


class TaskLineStep(_Closed):
    """One reference step, in chain order."""

    thought: str | None = None
    tool_name: str | None = None
    tool_args: Any = None
    result_text: str | None = None
    result: Any = None
    is_final: bool = False
    final_answer: str | None = None
    meta: dict[str, Any] = {}


class TaskLineCheckpoint(CheckpointChecks):
    """A checkpoint with the ordinal of the step it checks (``step``, null when it checks none)."""

    model_config = ConfigDict(extra="forbid")
    meta: dict[str, Any] = {}
    step: int | None = Field(default=None, ge=0)


class TaskLineOrdering(_Closed):
    key: str
    sequence: list[str]
    max_gap: int | None = None


class TaskLineDocument(_Closed):
    title: str | None = None
    text: str
    meta: dict[str, Any] = {}


class TaskLineImage(_Closed):
    """An image file under the folder, its role, and the step or document it belongs to (ordinals)."""

    path: str
    role: Literal["query_image", "document_image", "golden", "evidence", "artifact"] = "query_image"
    step: int | None = Field(default=None, ge=0)
    document: int | None = Field(default=None, ge=0)


class TaskLine(_Closed):
    """One line of ``tasks.jsonl`` (``chainmark export chainmark``)."""

    id: str
    query: str
    category: str | None = None
    subcategory: str | None = None
    intent: str | None = None
    level: str | None = None
    domain: str | None = None
    output_format: str | None = None
    answer_spec: AnswerSpec = Field(default_factory=lambda: NoAnswer(kind="none"))
    tools_offered: list[str] = []
    meta: dict[str, Any] = {}
    steps: list[TaskLineStep] = []
    checkpoints: list[TaskLineCheckpoint] = []
    orderings: list[TaskLineOrdering] = []
    documents: list[TaskLineDocument] = []
    images: list[TaskLineImage] = []


class RubricLine(_Closed):
    """One line of ``rubrics.jsonl``: a version of the benchmark's judge rubric, as it was saved
    (``store.rubrics``; the reader also refuses placeholders the rubric judge is not given)."""

    version: int = Field(ge=1)
    system: str = ""
    user: str = Field(min_length=1)
    author: str = ""
    created_at: str = Field(description="when it was saved: ISO 8601 with its UTC offset")
    parser: str = Field(min_length=1, max_length=40)
    params: dict[str, Any] = {}


def json_schema(which: Literal["answers", "checkpoints", "events", "tasks", "rubrics"]) -> dict[str, Any]:
    """The JSON Schema ``chainmark schema WHICH`` prints."""
    if which == "answers":
        schema, title = answer_spec_adapter.json_schema(), "chainmark answer spec"
    elif which == "checkpoints":
        schema, title = CheckpointChecks.model_json_schema(), "chainmark checkpoint"
    elif which == "tasks":
        schema, title = TaskLine.model_json_schema(), "chainmark task (a line of tasks.jsonl)"
    elif which == "rubrics":
        schema, title = RubricLine.model_json_schema(), "chainmark judge rubric version (a line of rubrics.jsonl)"
    else:
        schema, title = TypeAdapter(_event_records()).json_schema(), "chainmark event (kind and payload)"
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "x-chainmark-schema-version": SCHEMA_VERSION,
        **schema,
    }
