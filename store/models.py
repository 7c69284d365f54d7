"""The whole chainmark data model as SQLModel tables.

The schema is designed once here and owned by Alembic (`store/migrations`). Every later capability
fills these tables; none of them should need a table of its own. Types are portable: JSON (plain
`json` on PostgreSQL, so source records keep their key order), timezone-aware timestamps, explicit
constraint names through the naming convention below.

Targets that judges and humans rate (a trajectory, an event, a checkpoint result, an ISG block or
image question) are addressed by the triple ``(target_kind, target_id, target_part)``: the kind
names the table, the id its row, and ``target_part`` a sub-item inside it (``"block:3"``) or ``""``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel
from sqlmodel.main import SQLModelConfig

from store.clock import utcnow

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
SQLModel.metadata.naming_convention = NAMING_CONVENTION


class Table(SQLModel):
    """The base of every table. Rows are made without pydantic validation (SQLModel's table models
    skip it), so a table's validator and serializer are built when first asked for
    (``model_validate``, ``model_dump``), not while the module is imported."""

    model_config = SQLModelConfig(defer_build=True)


NEVER_REUSE_IDS = {"sqlite_autoincrement": True}
"""Table option of rows that an audit event or an undo entry names by id: SQLite must not hand a deleted
row's id to a new one (PostgreSQL's sequences never do). Migration 0010 rebuilt these tables with it."""


def _json(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=sa.Column(sa.JSON, nullable=nullable))


def _json_list() -> Any:
    return Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))


def _json_dict() -> Any:
    return Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))


def _ts() -> Any:
    return Field(default_factory=utcnow, sa_column=sa.Column(sa.DateTime(timezone=True), nullable=False))


def _ts_opt() -> Any:
    return Field(default=None, sa_column=sa.Column(sa.DateTime(timezone=True), nullable=True))


def _text(nullable: bool = True) -> Any:
    if nullable:
        return Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    return Field(default="", sa_column=sa.Column(sa.Text, nullable=False))


# --------------------------------------------------------------------------------------------
# Benchmarks, tasks and what they are made of
# --------------------------------------------------------------------------------------------


class Benchmark(Table, table=True):
    """A named collection of tasks in one source format, with its default tool set."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(max_length=120, unique=True)
    source_format: str = Field(max_length=40)  # gta | agentic-mme | isg | vtc | atp | chainmark
    tool_set: Optional[str] = Field(default=None, max_length=40)
    description: Optional[str] = _text()
    guidelines: Optional[str] = _text()  # annotation guidelines (Markdown)
    settings: dict[str, Any] = _json_dict()
    created_at: datetime = _ts()


class Task(Table, table=True):
    """One benchmark item: query, metadata, tagged answer spec and the source record verbatim."""

    __table_args__ = (sa.UniqueConstraint("benchmark_id", "source_id"), NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    benchmark_id: int = Field(foreign_key="benchmark.id", index=True)
    source_id: str = Field(max_length=200)
    query: str = _text(nullable=False)
    category: Optional[str] = Field(default=None, max_length=120, index=True)
    subcategory: Optional[str] = Field(default=None, max_length=120)
    intent: Optional[str] = Field(default=None, max_length=120)
    level: Optional[str] = Field(default=None, max_length=40)
    domain: Optional[str] = Field(default=None, max_length=120)
    answer_spec: dict[str, Any] = _json_dict()  # tagged union, see annotation.answers
    output_format: Optional[str] = _text()
    status: str = Field(default="draft", max_length=20, index=True)  # draft|submitted|verified|rejected
    revision: int = Field(default=1)
    # The editing session (one visit of an editor screen) that made the current revision: its further
    # saves belong to that revision (see annotation.tasks.bump_revision).
    edit_session: Optional[str] = Field(default=None, max_length=64)
    author: Optional[str] = Field(default=None, max_length=120)
    tools_offered: list[str] = _json_list()
    # Agentic-MME efficiency reference (task level).
    reference_tool_calls: Optional[int] = None
    max_tool_calls: Optional[int] = None
    penalty_per_extra_call: Optional[float] = None
    meta: dict[str, Any] = _json_dict()
    source_record: Optional[Any] = _json()  # the imported record, verbatim, for lossless export
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


class Asset(Table, table=True):
    """A content-addressed blob (image, artifact, screenshot); bytes live in the BlobStore."""

    id: Optional[int] = Field(default=None, primary_key=True)
    sha256: str = Field(max_length=64, unique=True)
    mime: str = Field(default="application/octet-stream", max_length=80)
    size: int = 0
    width: Optional[int] = None
    height: Optional[int] = None
    created_at: datetime = _ts()


class Blob(Table, table=True):
    """Blob bytes when the blob store is configured to live in the database (PostgreSQL teams)."""

    sha256: str = Field(max_length=64, primary_key=True)
    data: bytes = Field(sa_column=sa.Column(sa.LargeBinary, nullable=False))


class Document(Table, table=True):
    """A context document of a task (ATP-Bench), ordered, with text; its images are TaskAssets."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    ordinal: int = 0
    title: Optional[str] = Field(default=None, max_length=300)
    text: str = _text(nullable=False)
    meta: dict[str, Any] = _json_dict()


class Tool(Table, table=True):
    """A tool of a named, versioned tool set: OpenAI function schema plus runtime binding."""

    __table_args__ = (sa.UniqueConstraint("tool_set", "version", "name"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    tool_set: str = Field(max_length=40)
    version: str = Field(default="1", max_length=20)
    name: str = Field(max_length=120)
    description: str = _text(nullable=False)
    json_schema: dict[str, Any] = _json_dict()
    category: Optional[str] = Field(default=None, max_length=40)
    runtime: str = Field(default="replay", max_length=120)  # implementation id or "replay"
    meta: dict[str, Any] = _json_dict()


class ReferenceStep(Table, table=True):
    """One step of a task's reference chain: thought → tool call → result, or the final answer."""

    __table_args__ = (sa.UniqueConstraint("task_id", "ordinal"), NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    ordinal: int
    thought: Optional[str] = _text()
    tool_name: Optional[str] = Field(default=None, max_length=120)
    tool_args: Optional[Any] = _json()
    result_text: Optional[str] = _text()
    result: Optional[Any] = _json()  # structured tool result (JSON), asset ids inside
    is_final: bool = False
    final_answer: Optional[str] = _text()
    recorded_by: Optional[str] = Field(default=None, max_length=120)
    recorded_at: datetime = _ts()
    meta: dict[str, Any] = _json_dict()


class TaskAsset(Table, table=True):
    """Links an asset to a task in a role; optionally to a document or the step that produced it."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    asset_id: int = Field(foreign_key="asset.id", index=True)
    role: str = Field(default="query_image", max_length=40)  # query_image|document_image|evidence|artifact|golden
    ordinal: int = 0
    document_id: Optional[int] = Field(default=None, foreign_key="document.id")
    step_id: Optional[int] = Field(default=None, foreign_key="referencestep.id")
    original_path: Optional[str] = Field(default=None, max_length=1000)
    url: Optional[str] = Field(default=None, max_length=2000)


class Checkpoint(Table, table=True):
    """A stepwise check on a task: axis S/V/R/custom with code, visual, search and answer checks."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    step_id: Optional[int] = Field(default=None, foreign_key="referencestep.id")
    parent_id: Optional[int] = Field(default=None, foreign_key="checkpoint.id")
    key: str = Field(max_length=120)  # the source id ("cp1"), used by ordering constraints
    ordinal: int = 0
    axis: str = Field(default="V", max_length=20)
    description: Optional[str] = _text()
    tools: list[str] = _json_list()
    code_check: Optional[Any] = _json()  # {tool, verifier}
    visual_check: Optional[Any] = _json()  # {question, expected_answer}
    gt_asset_id: Optional[int] = Field(default=None, foreign_key="asset.id")
    search_check: Optional[Any] = _json()  # {keywords, urls, expected_answer}
    answer_check: Optional[Any] = _json()  # {match_type, target, tolerance, keywords, ...}
    weight: float = 1.0
    meta: dict[str, Any] = _json_dict()


class OrderingConstraint(Table, table=True):
    """Checkpoints that must pass in order, with at most ``max_gap`` events between neighbours."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    key: str = Field(max_length=120)
    sequence: list[str] = _json_list()  # checkpoint keys
    max_gap: Optional[int] = None


# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------


class ModelEndpoint(Table, table=True):
    """An OpenAI-compatible endpoint. The API key is read from the env var named here, never stored."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(max_length=120, unique=True)
    base_url: str = Field(max_length=500)
    model: str = Field(max_length=200)
    api_key_env: Optional[str] = Field(default=None, max_length=120)
    params: dict[str, Any] = _json_dict()  # temperature, max_tokens, ...
    created_at: datetime = _ts()


class Run(Table, table=True):
    """One execution of a benchmark by a model (or a human, or imported from another harness)."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: Optional[str] = Field(default=None, max_length=200)
    benchmark_id: int = Field(foreign_key="benchmark.id", index=True)
    endpoint_id: Optional[int] = Field(default=None, foreign_key="modelendpoint.id")
    kind: str = Field(default="model", max_length=20)  # model | human | imported
    mode: str = Field(max_length=20)  # atomic | code | react | plan | step
    prompt_version: Optional[str] = Field(default=None, max_length=80)
    budgets: dict[str, Any] = _json_dict()
    concurrency: int = 1
    status: str = Field(default="pending", max_length=20)  # pending|running|done|failed|cancelled
    config: dict[str, Any] = _json_dict()
    created_at: datetime = _ts()
    started_at: Optional[datetime] = _ts_opt()
    finished_at: Optional[datetime] = _ts_opt()


class RunLease(Table, table=True):
    """Who is executing a run right now: one row per run, taken atomically, renewed by a heartbeat.

    A second executor finds a live row and refuses; a row whose heartbeat expired (or whose process
    is gone, on the same host) is stale and may be taken over by a resume.
    """

    run_id: int = Field(foreign_key="run.id", primary_key=True)
    token: str = Field(max_length=64)
    host: str = Field(max_length=255)
    pid: int
    acquired_at: datetime = _ts()
    heartbeat_at: datetime = _ts()
    expires_at: datetime = _ts()


class LeaseColumns(Table):
    """The lease every claimable unit of work carries (``store.claims``): who holds it (token, host,
    pid), how often it was claimed, and when it was claimed, renewed, expires and finished. The
    timestamps name their type rather than a Column object, so each table gets columns of its own."""

    token: Optional[str] = Field(default=None, max_length=64)
    host: Optional[str] = Field(default=None, max_length=255)
    pid: Optional[int] = None
    attempts: int = 0
    claimed_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    heartbeat_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    expires_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    finished_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))


class TrajectoryClaim(LeaseColumns, table=True):
    """A queued run's trajectory as a unit of work for ``chainmark worker`` (PostgreSQL only).

    One row per trajectory of a queued run. A worker claims rows with ``SELECT … FOR UPDATE SKIP
    LOCKED`` and writes its token, host and pid and an expiry it keeps renewing; a claim whose
    expiry passed is taken over by another worker. ``finished_at`` is set in the transaction that
    commits the trajectory, and only while the token is still the committer's, so a worker that
    lost its claim can never write the trajectory a second time. Kept after the end: which host and
    process ran which trajectory, and how many times it was claimed.
    """

    trajectory_id: int = Field(foreign_key="trajectory.id", primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)


class JudgeClaim(LeaseColumns, table=True):
    """One trajectory to put before one judge, as a unit of work for ``chainmark worker`` (PostgreSQL
    only; ``chainmark judge … --queue``).

    The same lease columns as ``TrajectoryClaim`` (see ``store.claims``): a worker claims rows with
    ``SELECT … FOR UPDATE SKIP LOCKED``, renews their expiry, and writes verdicts only in a
    transaction that still holds the row under its token and attempt, so a worker whose claim was
    taken over writes nothing. ``verdicts``, ``model_calls``, ``cache_hits`` and ``error`` say what
    the finishing worker did; kept after the end.
    """

    __table_args__ = (sa.UniqueConstraint("trajectory_id", "judge", "endpoint", "mode"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    trajectory_id: int = Field(foreign_key="trajectory.id")
    judge: str = Field(max_length=255)  # the template (``chainmark judge --judge``)
    endpoint: str = Field(max_length=255)  # the ModelEndpoint name
    mode: str = Field(default="faithful", max_length=16)
    verdicts: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    error: Optional[str] = _text()


class Trajectory(Table, table=True):
    """A run on one task. Unique per (run, task) so a resumed run can never duplicate work."""

    __table_args__ = (sa.UniqueConstraint("run_id", "task_id"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    task_revision: int = 1
    status: str = Field(default="pending", max_length=20)  # pending|running|done|failed
    final_answer: Optional[str] = _text()
    usage: dict[str, Any] = _json_dict()  # tokens, calls, latency
    error: Optional[str] = _text()
    native: Optional[Any] = _json()  # the native log of another harness, for exact re-scoring
    started_at: Optional[datetime] = _ts_opt()
    finished_at: Optional[datetime] = _ts_opt()


class Event(Table, table=True):
    """One thing that happened in a trajectory: model message, tool call/result, code exec, error."""

    __table_args__ = (sa.UniqueConstraint("trajectory_id", "ordinal"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    trajectory_id: int = Field(foreign_key="trajectory.id", index=True)
    ordinal: int
    kind: str = Field(max_length=30)  # model_message|tool_call|tool_result|code_exec|error|...
    payload: dict[str, Any] = _json_dict()
    failed: bool = False
    started_at: datetime = _ts()
    finished_at: Optional[datetime] = _ts_opt()


class EventAsset(Table, table=True):
    """Assets produced or consumed by an event (images fed back to the model, artifacts)."""

    id: Optional[int] = Field(default=None, primary_key=True)
    event_id: int = Field(foreign_key="event.id", index=True)
    asset_id: int = Field(foreign_key="asset.id")
    ordinal: int = 0
    role: str = Field(default="output", max_length=20)


class ReplayCache(Table, table=True):
    """Request hash → response, for model, search, tool-service and judge calls."""

    id: Optional[int] = Field(default=None, primary_key=True)
    key: str = Field(max_length=64, unique=True)
    kind: str = Field(max_length=30, index=True)
    request: Optional[Any] = _json()
    response: Optional[Any] = _json()
    created_at: datetime = _ts()


class CheckpointResult(Table, table=True):
    """Whether a trajectory passed a checkpoint, by which event, decided how (rule/judge/human)."""

    __table_args__ = (sa.UniqueConstraint("trajectory_id", "checkpoint_id", "method", "scoring_mode"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    trajectory_id: int = Field(foreign_key="trajectory.id", index=True)
    checkpoint_id: int = Field(foreign_key="checkpoint.id", index=True)
    passed: bool
    score: Optional[float] = None
    matched_event_id: Optional[int] = Field(default=None, foreign_key="event.id")
    method: str = Field(default="rule", max_length=20)
    scoring_mode: str = Field(default="faithful", max_length=20)
    detail: dict[str, Any] = _json_dict()
    created_at: datetime = _ts()


# --------------------------------------------------------------------------------------------
# Judges, humans, agreement
# --------------------------------------------------------------------------------------------


class Judge(Table, table=True):
    """An LLM judge: a prompt template file (id + version) on an endpoint."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(max_length=120, unique=True)
    endpoint_id: Optional[int] = Field(default=None, foreign_key="modelendpoint.id")
    template: str = Field(max_length=200)
    template_version: str = Field(default="1", max_length=40)
    params: dict[str, Any] = _json_dict()
    created_at: datetime = _ts()


class JudgeTemplate(Table, table=True):
    """A judge prompt read from the user's checkout of a reference repository (``judges import-prompts``).

    The text never ships with chainmark; it is stored per database with where it came from (repository,
    commit or content hash, file and variable) so a score can say which prompts produced it.
    """

    id: Optional[int] = Field(default=None, primary_key=True)
    judge: str = Field(max_length=120, index=True)
    version: str = Field(max_length=80)
    parser: str = Field(max_length=40)
    system: str = _text(nullable=False)
    user: str = _text(nullable=False)
    params: dict[str, Any] = _json_dict()
    benchmark: str = Field(max_length=120)  # a benchmark's name (an authored rubric's, up to 120 characters)
    # repo path, commit / content hash, file, variable; an authored rubric: {"kind": "authored", …}
    source: dict[str, Any] = _json_dict()
    created_at: datetime = _ts()


class Verdict(Table, table=True):
    """One judge's answer about one target."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    judge_id: int = Field(foreign_key="judge.id", index=True)
    target_kind: str = Field(max_length=30)
    target_id: int
    target_part: str = Field(default="", max_length=120)
    label: Optional[str] = Field(default=None, max_length=120)
    score: Optional[float] = None
    rationale: Optional[str] = _text()
    parsed: Optional[Any] = _json()
    raw_output: Optional[str] = _text()
    prompt_hash: Optional[str] = Field(default=None, max_length=64)
    # the template version that judged it (a rubric's v1 stays v1 after v2 is written); None before 0011
    template_version: Optional[str] = Field(default=None, max_length=80)
    created_at: datetime = _ts()


class Annotator(Table, table=True):
    """A person who rates or reviews: role annotator | reviewer | admin."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(max_length=120, unique=True)
    role: str = Field(default="annotator", max_length=20)
    created_at: datetime = _ts()
    # sha256 of the person's `chainmark serve` login token (the token itself is shown once, never stored)
    serve_token_hash: Optional[str] = Field(default=None, max_length=64)


class RatingScale(Table, table=True):
    """A rating scale as data: level of measurement, allowed values, dimensions, rubric."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(max_length=80, unique=True)
    level: str = Field(default="nominal", max_length=20)  # nominal | ordinal | interval
    values: list[Any] = _json_list()
    dimensions: list[str] = _json_list()
    rubric: Optional[str] = _text()


class Assignment(Table, table=True):
    """A target handed to an annotator for rating on a scale."""

    __table_args__ = (sa.UniqueConstraint("annotator_id", "target_kind", "target_id", "target_part", "scale"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    target_kind: str = Field(max_length=30)
    target_id: int
    target_part: str = Field(default="", max_length=120)
    scale: str = Field(max_length=80)
    blind: bool = True
    status: str = Field(default="open", max_length=20)  # open | done
    created_at: datetime = _ts()


class HumanRating(Table, table=True):
    """A person's rating of a target on a scale, with the task revision they saw."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    target_kind: str = Field(max_length=30)
    target_id: int
    target_part: str = Field(default="", max_length=120)
    scale: str = Field(max_length=80)
    value: Optional[Any] = _json()
    comment: Optional[str] = _text()
    blind: bool = False
    task_id: Optional[int] = Field(default=None, foreign_key="task.id")
    task_revision: Optional[int] = None
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


class Adjudication(Table, table=True):
    """A reviewer's final value for a disputed target; the originals it overrode stay untouched."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    reviewer_id: int = Field(foreign_key="annotator.id")
    target_kind: str = Field(max_length=30)
    target_id: int
    target_part: str = Field(default="", max_length=120)
    scale: str = Field(max_length=80)
    final_value: Optional[Any] = _json()
    rationale: Optional[str] = _text()
    overrides: dict[str, Any] = _json_dict()  # {"verdicts": [ids], "ratings": [ids]}
    created_at: datetime = _ts()


class Preference(Table, table=True):
    """A person's pairwise judgement of two runs' answers to one task: which is better, or a tie.

    The pair is stored in canonical order (``run_a_id`` < ``run_b_id``) and ``choice`` is in those
    terms (``a``: run_a better, ``b``: run_b better, ``tie``); ``shown_left_run_id`` is the run the
    person saw as "A", so position bias can be studied. One row per person, task and pair: judging
    again updates it (``revision`` counts the changes; the audit trail keeps the earlier choices).
    """

    __table_args__ = (sa.UniqueConstraint("annotator_id", "task_id", "run_a_id", "run_b_id"), NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    annotator_id: int = Field(foreign_key="annotator.id", index=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    run_a_id: int = Field(foreign_key="run.id")
    run_b_id: int = Field(foreign_key="run.id")
    shown_left_run_id: int
    choice: str = Field(max_length=8)  # a | b | tie, in canonical (run_a, run_b) terms
    reason: Optional[str] = _text()
    task_revision: Optional[int] = None
    revision: int = 1
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


PREFERENCE_SCALE = "preference"
"""The ``Assignment.scale`` of pairwise preference work (not a rating scale: the value is a Preference row)."""


def preference_pair_part(run_a_id: int, run_b_id: int) -> str:
    """``Assignment.target_part`` of a pair of runs on a task (target ``task:<id>``), canonical order."""
    lo, hi = sorted((run_a_id, run_b_id))
    return f"pair:{lo}-{hi}"


class AuditEvent(Table, table=True):
    """Who changed what, when, with the row before and after."""

    id: Optional[int] = Field(default=None, primary_key=True)
    actor: str = Field(default="system", max_length=120)
    action: str = Field(max_length=20)  # create | update | delete
    entity: str = Field(max_length=40, index=True)
    entity_id: Optional[int] = Field(default=None, index=True)
    before: Optional[Any] = _json()
    after: Optional[Any] = _json()
    created_at: datetime = _ts()


class UndoEntry(Table, table=True):
    """One step of a person's undo stack (per task or screen), so ctrl+z works after a restart."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    actor: str = Field(max_length=120, index=True)
    scope: str = Field(max_length=60)
    label: str = Field(max_length=200)
    op: str = Field(max_length=40)
    args: dict[str, Any] = _json_dict()
    created_at: datetime = _ts()


ALL_TABLES = [
    Benchmark,
    Task,
    Asset,
    Blob,
    Document,
    Tool,
    ReferenceStep,
    TaskAsset,
    Checkpoint,
    OrderingConstraint,
    ModelEndpoint,
    Run,
    Trajectory,
    Event,
    EventAsset,
    ReplayCache,
    CheckpointResult,
    Judge,
    Verdict,
    Annotator,
    RatingScale,
    Assignment,
    HumanRating,
    Adjudication,
    Preference,
    AuditEvent,
    UndoEntry,
]

# The audit trail is part of having these tables: whoever can make a row of them gets the session
# hooks that record edits of these (they are all defined by now).
from store import audit as _audit  # noqa: E402

_audit.install(
    (Task, ReferenceStep, Checkpoint, OrderingConstraint, Document, HumanRating, Adjudication, TaskAsset, Preference),
    AuditEvent,
)
