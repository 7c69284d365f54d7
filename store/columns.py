"""The columns the plain listings read, as SQLAlchemy Core table clauses.

The schema is ``store.models`` (and the migrations); these only name the tables and columns that
``store.queries`` selects, with the types that decide how a value is read back (JSON, timestamps),
so a listing builds its statement without building the SQLModel classes: ``chainmark benchmarks
list`` then starts in about half the time (bench/bench_startup.py). tests/store/test_columns.py
holds every column here to the model's name and type.
"""

from __future__ import annotations

import sqlalchemy as sa

benchmark = sa.table(
    "benchmark",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("source_format", sa.String),
    sa.column("tool_set", sa.String),
)
task = sa.table(
    "task",
    sa.column("id", sa.Integer),
    sa.column("benchmark_id", sa.Integer),
    sa.column("source_id", sa.String),
    sa.column("query", sa.Text),
    sa.column("category", sa.String),
    sa.column("level", sa.String),
    sa.column("status", sa.String),
    sa.column("revision", sa.Integer),
    sa.column("answer_spec", sa.JSON),
)
referencestep = sa.table("referencestep", sa.column("task_id", sa.Integer))
checkpoint = sa.table("checkpoint", sa.column("task_id", sa.Integer))
taskasset = sa.table("taskasset", sa.column("task_id", sa.Integer), sa.column("role", sa.String))
run = sa.table(
    "run",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("benchmark_id", sa.Integer),
    sa.column("endpoint_id", sa.Integer),
    sa.column("mode", sa.String),
    sa.column("prompt_version", sa.String),
    sa.column("budgets", sa.JSON),
    sa.column("concurrency", sa.Integer),
    sa.column("status", sa.String),
    sa.column("config", sa.JSON),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("started_at", sa.DateTime(timezone=True)),
    sa.column("finished_at", sa.DateTime(timezone=True)),
)
modelendpoint = sa.table("modelendpoint", sa.column("id", sa.Integer), sa.column("name", sa.String))
trajectory = sa.table("trajectory", sa.column("run_id", sa.Integer), sa.column("status", sa.String))
runlease = sa.table(
    "runlease",
    sa.column("run_id", sa.Integer),
    sa.column("host", sa.String),
    sa.column("pid", sa.Integer),
    sa.column("heartbeat_at", sa.DateTime(timezone=True)),
    sa.column("expires_at", sa.DateTime(timezone=True)),
)
trajectoryclaim = sa.table(
    "trajectoryclaim",
    sa.column("run_id", sa.Integer),
    sa.column("token", sa.String),
    sa.column("expires_at", sa.DateTime(timezone=True)),
    sa.column("finished_at", sa.DateTime(timezone=True)),
)

TABLES = (
    benchmark,
    task,
    referencestep,
    checkpoint,
    taskasset,
    run,
    modelendpoint,
    trajectory,
    runlease,
    trajectoryclaim,
)
