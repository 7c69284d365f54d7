"""The typed shape of a scorer's answer: what every profile returns and what ``chainmark score`` prints.

Profiles used to hand back plain dictionaries, and every reader (the CLI, reports, run comparison,
conformance) guessed at their keys. ``ScoreResult`` is the one definition: profiles build it through
``evaluation.benchmarks.base.result``, the runner adds the run's identity, and ``public()`` is the
JSON document (its JSON Schema: ``chainmark schema results``). Values are validated strictly, so a
count stays an int and a rate a float; nothing is coerced on the way through.

Per-item rows stay benchmark-specific dictionaries (each profile documents its own keys) but every
row must name its trajectory, which is what the store, comparison and review screens join on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

RESULTS_SCHEMA_VERSION: Final = 1

Scalar = Union[StrictInt, StrictFloat, StrictBool, None]
"""One number of the paper (None where there is nothing to divide by)."""

if TYPE_CHECKING:  # readers index breakdown tables by key; the check below is at run time
    Metric = Any
else:
    Metric = Union[Scalar, dict[str, Any]]
    """A headline number, or a breakdown table (tool usage counts, the overthinking detail, …)."""


def _names_trajectory(row: dict[str, Any]) -> dict[str, Any]:
    traj = row.get("trajectory_id")
    if not isinstance(traj, int) or isinstance(traj, bool):
        raise ValueError(f"a per-item row must carry an integer trajectory_id; got {traj!r}")
    return row


ItemRow = Annotated[
    dict[str, Any],
    AfterValidator(_names_trajectory),
    Field(json_schema_extra={"required": ["trajectory_id"], "description": "benchmark-specific keys"}),
]


class Usage(BaseModel):
    """Tool adoption (share of items using a tool, %) and the calls-per-item histogram."""

    model_config = ConfigDict(extra="forbid")

    items: StrictInt = 0
    tool_adoption: dict[str, StrictFloat] = Field(default_factory=dict)
    tool_calls: dict[str, StrictInt] = Field(default_factory=dict)
    calls_histogram: dict[str, StrictInt] = Field(default_factory=dict)
    tool_call_rate: StrictFloat | None = None


class ScoreResult(BaseModel):
    """One scoring of one run: the paper's numbers, how they were computed, and per-item rows."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, validate_assignment=True)

    schema_version: Literal[1] = RESULTS_SCHEMA_VERSION
    profile: str
    mode: Literal["faithful", "fixed"]
    run_mode: str
    embedder: str | None = None
    metrics: dict[str, Metric]
    by_category: dict[str, dict[str, Metric]] = Field(default_factory=dict)
    category_label: str = "category"
    per_item: list[ItemRow] = Field(default_factory=list)
    outcomes: list[tuple[int, Any]] = Field(default_factory=list, exclude=True)
    """(trajectory id, ``CheckpointOutcome``) pairs the runner stores as CheckpointResult rows."""
    pending_judgements: StrictInt = 0
    usage: Usage = Field(default_factory=Usage)
    notes: list[str] = Field(default_factory=list)
    corrections: list[str] = Field(default_factory=list)
    """Fixed-mode corrections applied (names from the profile's ``CORRECTIONS``)."""

    # filled in by the runner from the stored run
    run_id: StrictInt | None = None
    run_name: str | None = None
    benchmark: str | None = None
    model: str | None = None
    judges_used: list[str] = Field(default_factory=list)
    pending_by_judge: dict[str, StrictInt] = Field(default_factory=dict)
    judge_prompts: dict[str, Any] = Field(default_factory=dict)
    unsafe_in_process_sandbox: bool = False
    checkpoint_results_written: StrictInt = 0

    @classmethod
    def with_rows(cls, per_item: list[dict[str, Any]], outcomes: list[tuple[int, Any]], **fields: Any) -> "ScoreResult":
        """The constructor's result, with the (10,000s of) per-item rows and outcomes checked by one plain
        loop instead of one validator call each (half a second for 10,000 Agentic-MME items). Anything
        the loop does not recognise as already valid goes through the validators as before."""
        res = cls(**fields)
        if _valid_rows(per_item):
            res.__dict__["per_item"] = per_item if type(per_item) is list else list(per_item)
        else:
            res.per_item = per_item
        if _valid_outcomes(outcomes):
            res.__dict__["outcomes"] = outcomes if type(outcomes) is list else list(outcomes)
        else:
            res.outcomes = outcomes
        res.__pydantic_fields_set__.update(("per_item", "outcomes"))
        return res

    def add_notes(self, *notes: str) -> None:
        self.notes = [*self.notes, *notes]

    def public(self, *, per_item: bool = False) -> dict[str, Any]:
        """The JSON document: no internal objects; per-item rows only when asked for."""
        out = self.model_dump(exclude={"per_item"})
        out["checkpoint_outcomes"] = len(self.outcomes)
        if per_item:
            out["per_item"] = self.per_item
        return out


def _valid_rows(rows: Any) -> bool:
    """Rows the validators would pass unchanged: plain dicts with string keys and an int trajectory_id."""
    for row in rows:
        if type(row) is not dict or type(row.get("trajectory_id")) is not int:
            return False
        for k in row:
            if type(k) is not str:
                return False
    return True


def _valid_outcomes(outcomes: Any) -> bool:
    """(int, anything) pairs, as the validators would leave them."""
    for o in outcomes:
        if type(o) is not tuple or len(o) != 2 or type(o[0]) is not int:
            return False
    return True


def results_json_schema() -> dict[str, Any]:
    """JSON Schema of ``chainmark score --json`` output (``public()``), versioned."""
    schema = ScoreResult.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["x-chainmark-schema-version"] = RESULTS_SCHEMA_VERSION
    schema["properties"]["checkpoint_outcomes"] = {"type": "integer", "description": "outcomes stored"}
    schema["properties"]["per_item"]["description"] = "only with --per-item"
    return schema
