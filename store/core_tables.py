"""The tables ``chainmark run``, ``score`` and ``import`` read and write, as SQLAlchemy Core table clauses.

The schema is ``store.models`` (and the migrations); these name the columns the run path (from the
endpoint look-up to the last commit), the score path (the run, its trajectories, events and tasks,
stored verdicts and judge templates, the CheckpointResult rows it writes) and a dataset import (the
benchmark, new tasks and their children, their files and audit events) use, with the types that
decide how a value is written and read back (JSON, timestamps, booleans). Those commands then never
build the SQLModel classes or the ORM (an import only to update a task it finds changed): about a
third of a second of a run's or an import's start-up (bench/bench_harness.py --whole,
bench/bench_startup.py) and a fifth of score's (bench/bench_scoring.py --command). Every
insert names all of its NOT NULL columns: a table clause carries none of the models' defaults.
tests/store/test_core_tables.py holds every column here to the model's name and type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

import sqlalchemy as sa
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

Reader = Union["Session", Connection]
"""What these functions read through: an ORM session (the TUI's, the tests') or a plain connection
(the command line's)."""


def connection_of(reader: Reader) -> Connection:
    """The connection under an ORM session, or the connection itself."""
    return reader if isinstance(reader, Connection) else reader.connection()


_TS = sa.DateTime(timezone=True)

benchmark = sa.table(
    "benchmark",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("tool_set", sa.String),
    sa.column("settings", sa.JSON),
    sa.column("source_format", sa.String),
    sa.column("description", sa.Text),
    sa.column("guidelines", sa.Text),
    sa.column("created_at", _TS),
)
task = sa.table(
    "task",
    sa.column("id", sa.Integer),
    sa.column("benchmark_id", sa.Integer),
    sa.column("source_id", sa.String),
    sa.column("query", sa.Text),
    sa.column("status", sa.String),
    sa.column("revision", sa.Integer),
    sa.column("answer_spec", sa.JSON),
    sa.column("output_format", sa.Text),
    sa.column("tools_offered", sa.JSON),
    sa.column("meta", sa.JSON),
    sa.column("category", sa.String),
    sa.column("subcategory", sa.String),
    sa.column("intent", sa.String),
    sa.column("level", sa.String),
    sa.column("domain", sa.String),
    sa.column("reference_tool_calls", sa.Integer),
    sa.column("max_tool_calls", sa.Integer),
    sa.column("penalty_per_extra_call", sa.Float),
    sa.column("source_record", sa.JSON),
    sa.column("edit_session", sa.String),
    sa.column("author", sa.String),
    sa.column("created_at", _TS),
    sa.column("updated_at", _TS),
)
asset = sa.table(
    "asset",
    sa.column("id", sa.Integer),
    sa.column("sha256", sa.String),
    sa.column("mime", sa.String),
    sa.column("size", sa.Integer),
    sa.column("width", sa.Integer),
    sa.column("height", sa.Integer),
    sa.column("created_at", _TS),
)
blob = sa.table("blob", sa.column("sha256", sa.String), sa.column("data", sa.LargeBinary))
taskasset = sa.table(
    "taskasset",
    sa.column("id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("asset_id", sa.Integer),
    sa.column("role", sa.String),
    sa.column("ordinal", sa.Integer),
    sa.column("document_id", sa.Integer),
    sa.column("original_path", sa.String),
    sa.column("step_id", sa.Integer),
    sa.column("url", sa.String),
)
document = sa.table(
    "document",
    sa.column("id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("title", sa.String),
    sa.column("text", sa.Text),
    sa.column("meta", sa.JSON),
)
referencestep = sa.table(
    "referencestep",
    sa.column("task_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("thought", sa.Text),
    sa.column("tool_name", sa.String),
    sa.column("tool_args", sa.JSON),
    sa.column("result_text", sa.Text),
    sa.column("is_final", sa.Boolean),
    sa.column("final_answer", sa.Text),
    sa.column("result", sa.JSON),
    sa.column("id", sa.Integer),
    sa.column("recorded_by", sa.String),
    sa.column("recorded_at", _TS),
    sa.column("meta", sa.JSON),
)
modelendpoint = sa.table(
    "modelendpoint",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("base_url", sa.String),
    sa.column("model", sa.String),
    sa.column("api_key_env", sa.String),
    sa.column("params", sa.JSON),
)
run = sa.table(
    "run",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("benchmark_id", sa.Integer),
    sa.column("endpoint_id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("mode", sa.String),
    sa.column("prompt_version", sa.String),
    sa.column("budgets", sa.JSON),
    sa.column("concurrency", sa.Integer),
    sa.column("status", sa.String),
    sa.column("config", sa.JSON),
    sa.column("created_at", _TS),
    sa.column("started_at", _TS),
    sa.column("finished_at", _TS),
)
runlease = sa.table(
    "runlease",
    sa.column("run_id", sa.Integer),
    sa.column("token", sa.String),
    sa.column("host", sa.String),
    sa.column("pid", sa.Integer),
    sa.column("acquired_at", _TS),
    sa.column("heartbeat_at", _TS),
    sa.column("expires_at", _TS),
)
trajectory = sa.table(
    "trajectory",
    sa.column("id", sa.Integer),
    sa.column("run_id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("task_revision", sa.Integer),
    sa.column("status", sa.String),
    sa.column("final_answer", sa.Text),
    sa.column("usage", sa.JSON),
    sa.column("error", sa.Text),
    sa.column("started_at", _TS),
    sa.column("finished_at", _TS),
    sa.column("native", sa.JSON),
)
event = sa.table(
    "event",
    sa.column("id", sa.Integer),
    sa.column("trajectory_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("payload", sa.JSON),
    sa.column("failed", sa.Boolean),
    sa.column("started_at", _TS),
    sa.column("finished_at", _TS),
)
eventasset = sa.table(
    "eventasset",
    sa.column("id", sa.Integer),
    sa.column("event_id", sa.Integer),
    sa.column("asset_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("role", sa.String),
)
replaycache = sa.table(
    "replaycache",
    sa.column("id", sa.Integer),
    sa.column("key", sa.String),
    sa.column("kind", sa.String),
    sa.column("request", sa.JSON),
    sa.column("response", sa.JSON),
    sa.column("created_at", _TS),
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
auditevent = sa.table(
    "auditevent",
    sa.column("id", sa.Integer),
    sa.column("entity", sa.String),
    sa.column("entity_id", sa.Integer),
    sa.column("action", sa.String),
    sa.column("before", sa.JSON),
    sa.column("created_at", _TS),
    sa.column("actor", sa.String),
    sa.column("after", sa.JSON),
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
    benchmark,
    task,
    asset,
    blob,
    taskasset,
    document,
    referencestep,
    modelendpoint,
    run,
    runlease,
    trajectory,
    event,
    eventasset,
    replaycache,
    checkpoint,
    orderingconstraint,
    auditevent,
    checkpointresult,
    verdict,
    judge,
    judgetemplate,
)
