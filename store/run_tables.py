"""The tables a run reads and writes, as SQLAlchemy Core table clauses.

The schema is ``store.models`` (and the migrations); these name the columns ``chainmark run`` uses
from the endpoint look-up to the last commit, with the types that decide how a value is written and
read back (JSON, timestamps, booleans), so a run reaches its first model call without building the
SQLModel classes (about a third of a second of start-up, bench/bench_harness.py --whole). Every
insert here names all of its NOT NULL columns: a table clause carries none of the models' defaults.
tests/store/test_run_tables.py holds every column here to the model's name and type.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

_TS = sa.DateTime(timezone=True)


def connection_of(reader: Any) -> Connection:
    """The connection under an ORM session, or the connection itself: the run's database functions
    take either (the command line hands them a connection, the TUI and tests a session)."""
    return reader if isinstance(reader, Connection) else reader.connection()


benchmark = sa.table(
    "benchmark",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("tool_set", sa.String),
    sa.column("settings", sa.JSON),
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
)
document = sa.table(
    "document",
    sa.column("id", sa.Integer),
    sa.column("task_id", sa.Integer),
    sa.column("ordinal", sa.Integer),
    sa.column("title", sa.String),
    sa.column("text", sa.Text),
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
)
