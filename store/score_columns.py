"""The tables and columns scoring a run reads and writes, as SQLAlchemy Core table clauses.

The schema is ``store.models`` (and the migrations); these name only what ``chainmark score`` touches
(the run, its trajectories, events and tasks, stored verdicts and judge templates, the
CheckpointResult rows it writes), with the types that decide how a value is read back and stored
(JSON, timestamps, booleans). Scoring then never builds the SQLModel classes or the ORM: about a
fifth of a second of the command's start-up (bench/bench_scoring.py --command).
tests/store/test_score_columns.py holds every column here to the model's name and type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

import sqlalchemy as sa
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

Reader = Union["Session", Connection]
"""What scoring reads through: an ORM session (the TUI's) or a plain connection (``chainmark score``)."""


def connection_of(reader: Reader) -> Connection:
    """The connection a session or a connection runs Core statements on."""
    return reader if isinstance(reader, Connection) else reader.connection()


_TS = sa.DateTime(timezone=True)

run = sa.table(
    "run",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("mode", sa.String),
    sa.column("kind", sa.String),
    sa.column("status", sa.String),
    sa.column("config", sa.JSON),
    sa.column("prompt_version", sa.String),
    sa.column("benchmark_id", sa.Integer),
    sa.column("endpoint_id", sa.Integer),
)
benchmark = sa.table(
    "benchmark",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("source_format", sa.String),
    sa.column("settings", sa.JSON),
)
modelendpoint = sa.table("modelendpoint", sa.column("id", sa.Integer), sa.column("model", sa.String))
trajectory = sa.table(
    "trajectory",
    sa.column("id", sa.Integer),
    sa.column("run_id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("status", sa.String),
    sa.column("final_answer", sa.Text),
    sa.column("usage", sa.JSON),
    sa.column("native", sa.JSON),
    sa.column("error", sa.Text),
    sa.column("task_revision", sa.Integer),
    sa.column("started_at", _TS),
)
task = sa.table(
    "task",
    sa.column("id", sa.Integer),
    sa.column("source_id", sa.String),
    sa.column("query", sa.Text),
    sa.column("category", sa.String),
    sa.column("subcategory", sa.String),
    sa.column("intent", sa.String),
    sa.column("level", sa.String),
    sa.column("domain", sa.String),
    sa.column("answer_spec", sa.JSON),
    sa.column("output_format", sa.Text),
    sa.column("tools_offered", sa.JSON),
    sa.column("reference_tool_calls", sa.Integer),
    sa.column("max_tool_calls", sa.Integer),
    sa.column("penalty_per_extra_call", sa.Float),
    sa.column("meta", sa.JSON),
    sa.column("source_record", sa.JSON),
    sa.column("revision", sa.Integer),
)
checkpoint = sa.table(
    "checkpoint",
    sa.column("id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("key", sa.String),
    sa.column("ordinal", sa.Integer),
    sa.column("axis", sa.String),
    sa.column("description", sa.Text),
    sa.column("tools", sa.JSON),
    sa.column("code_check", sa.JSON),
    sa.column("visual_check", sa.JSON),
    sa.column("gt_asset_id", sa.Integer),
    sa.column("search_check", sa.JSON),
    sa.column("answer_check", sa.JSON),
    sa.column("weight", sa.Float),
    sa.column("parent_id", sa.Integer),
    sa.column("step_id", sa.Integer),
    sa.column("meta", sa.JSON),
)
orderingconstraint = sa.table(
    "orderingconstraint",
    sa.column("id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("key", sa.String),
    sa.column("sequence", sa.JSON),
    sa.column("max_gap", sa.Integer),
)
referencestep = sa.table(
    "referencestep",
    sa.column("task_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("thought", sa.Text),
    sa.column("tool_name", sa.String),
    sa.column("tool_args", sa.JSON),
    sa.column("result_text", sa.Text),
    sa.column("result", sa.JSON),
    sa.column("is_final", sa.Boolean),
    sa.column("final_answer", sa.Text),
)
taskasset = sa.table(
    "taskasset",
    sa.column("id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("asset_id", sa.Integer),
    sa.column("role", sa.String),
    sa.column("ordinal", sa.Integer),
    sa.column("original_path", sa.String),
    sa.column("document_id", sa.Integer),
)
asset = sa.table("asset", sa.column("id", sa.Integer), sa.column("sha256", sa.String))
eventasset = sa.table(
    "eventasset", sa.column("id", sa.Integer), sa.column("event_id", sa.Integer), sa.column("asset_id", sa.Integer)
)
event = sa.table(
    "event",
    sa.column("id", sa.Integer),
    sa.column("trajectory_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("payload", sa.JSON),
    sa.column("failed", sa.Boolean),
)
auditevent = sa.table(
    "auditevent",
    sa.column("id", sa.Integer),
    sa.column("entity", sa.String),
    sa.column("entity_id", sa.Integer),
    sa.column("action", sa.String),
    sa.column("before", sa.JSON),
    sa.column("created_at", _TS),
)
checkpointresult = sa.table(
    "checkpointresult",
    sa.column("id", sa.Integer),
    sa.column("trajectory_id", sa.Integer),
    sa.column("checkpoint_id", sa.Integer),
    sa.column("passed", sa.Boolean),
    sa.column("score", sa.Float),
    sa.column("matched_event_id", sa.Integer),
    sa.column("method", sa.String),
    sa.column("scoring_mode", sa.String),
    sa.column("detail", sa.JSON),
    sa.column("created_at", _TS),
)
verdict = sa.table(
    "verdict",
    sa.column("id", sa.Integer),
    sa.column("judge_id", sa.Integer),
    sa.column("target_kind", sa.String),
    sa.column("target_id", sa.Integer),
    sa.column("target_part", sa.String),
    sa.column("prompt_hash", sa.String),
    sa.column("label", sa.String),
    sa.column("score", sa.Float),
    sa.column("parsed", sa.JSON),
    sa.column("raw_output", sa.Text),
)
judge = sa.table("judge", sa.column("id", sa.Integer), sa.column("name", sa.String), sa.column("template", sa.String))
judgetemplate = sa.table(
    "judgetemplate",
    sa.column("id", sa.Integer),
    sa.column("judge", sa.String),
    sa.column("version", sa.String),
    sa.column("parser", sa.String),
    sa.column("system", sa.Text),
    sa.column("user", sa.Text),
    sa.column("params", sa.JSON),
    sa.column("source", sa.JSON),
)

TABLES = (
    run,
    benchmark,
    modelendpoint,
    trajectory,
    task,
    checkpoint,
    orderingconstraint,
    referencestep,
    taskasset,
    asset,
    eventasset,
    event,
    auditevent,
    checkpointresult,
    verdict,
    judge,
    judgetemplate,
)
