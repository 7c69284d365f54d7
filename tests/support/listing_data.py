"""A database whose listings exercise every way a value can print: unicode, JSON null, NULL columns,
every task status, long and multi-line text, terminal control characters (escaped on output), runs in
every shown status (done, interrupted, live and stale leases, queued with held and expired claims)
and timestamps with and without microseconds. Every value is fixed, so the listings' output is too
(tests/cli/test_listing_output.py holds it byte for byte against the output stored from the
SQLAlchemy Core listings)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
FAR = datetime(2999, 1, 1, tzinfo=UTC)  # a lease or claim that has not expired
PAST = datetime(2001, 1, 1, tzinfo=UTC)  # one that has

BENCHMARKS: list[dict[str, Any]] = [
    {"name": "alpha", "source_format": "gta", "tool_set": "gta"},
    {"name": "Zeta", "source_format": "chainmark", "tool_set": None},
    {"name": "Ünïcode-β 日本語", "source_format": "isg", "tool_set": "isg"},
    {"name": "ctl\x1b[31mred\x07\x9b", "source_format": "vtc", "tool_set": "vtc\ttab"},
    {"name": "empty", "source_format": "atp", "tool_set": "atp"},
    {"name": "l" * 110, "source_format": "agentic-mme", "tool_set": "agentic-mme"},
]
QUERIES = [
    "How many cats?",
    "Wie viele Äpfel? — ünïcödé «quotes» 日本語の質問",
    "line one\nline two\ttabbed\r\ncarriage",
    "escape \x1b[2J clear \x1b]0;title\x07 bell \x9b C1 \x7f del",
    "x" * 300,
    " leading and trailing spaces   ",
    "100% of_the under_score and % percent",
    "MiXeD CaSe Query",
]
ANSWERS: list[Any] = [
    {"kind": "exact", "value": "3"},
    {"kind": "contains", "value": "ü"},
    {"value": "no kind"},
    None,  # stored as JSON null
    {"kind": "whitelist", "values": ["a", "b"]},
    {"kind": "numeric\x1b[0m", "value": 1.5},
]


def fill(engine: Engine) -> None:
    """Write the rows (the schema must be at head)."""
    from store import models as m

    tasks, steps, cps, assets, links = [], [], [], [], []
    bench_ids = range(1, len(BENCHMARKS) + 1)
    n = 0
    for b in bench_ids:
        if BENCHMARKS[b - 1]["name"] == "empty":
            continue
        for i in range(11):
            n += 1
            tasks.append(
                {
                    "id": n,
                    "benchmark_id": b,
                    "source_id": f"s{i}" if i % 3 else f"ü-{i}\x1b",
                    "query": QUERIES[(n + b) % len(QUERIES)],
                    "category": [None, "perception", "logic\x07", "日本"][i % 4],
                    "level": [None, "1", "2"][i % 3],
                    "status": ["draft", "submitted", "verified", "rejected"][(i + b) % 4],
                    "revision": 1 + i % 5,
                    "answer_spec": ANSWERS[(n * 7) % len(ANSWERS)],
                    "created_at": T0,
                    "updated_at": T0,
                }
            )
            for k in range(n % 4):
                steps.append({"task_id": n, "ordinal": k, "recorded_at": T0})
            for k in range(n % 3):
                cps.append({"task_id": n, "key": f"cp{k}"})
            for k in range(n % 5):
                links.append({"task_id": n, "asset_id": 1 + k % 2, "role": "query_image" if k % 2 else "evidence"})
    assets = [{"id": i, "sha256": f"{i:064x}", "created_at": T0} for i in (1, 2)]
    runs, trajs, leases, claims = _runs()
    with engine.begin() as c:
        c.execute(
            sa.insert(_table(m.Benchmark)),
            [_defaults(m.Benchmark, {"id": b, **BENCHMARKS[b - 1], "created_at": T0}) for b in bench_ids],
        )
        c.execute(sa.insert(_table(m.Task)), [_defaults(m.Task, t) for t in tasks])
        c.execute(sa.insert(_table(m.ReferenceStep)), [_defaults(m.ReferenceStep, s) for s in steps])
        c.execute(sa.insert(_table(m.Checkpoint)), [_defaults(m.Checkpoint, s) for s in cps])
        c.execute(sa.insert(_table(m.Asset)), [_defaults(m.Asset, a) for a in assets])
        c.execute(sa.insert(_table(m.TaskAsset)), [_defaults(m.TaskAsset, a) for a in links])
        c.execute(
            sa.insert(_table(m.ModelEndpoint)),
            [
                _defaults(m.ModelEndpoint, {"id": 1, "name": "local", "base_url": "http://x/v1", "model": "m"}),
                _defaults(m.ModelEndpoint, {"id": 2, "name": "ënd\x1bpoint", "base_url": "http://y/v1", "model": "m"}),
            ],
        )
        c.execute(sa.insert(_table(m.Run)), [_defaults(m.Run, r) for r in runs])
        c.execute(sa.insert(_table(m.Trajectory)), [_defaults(m.Trajectory, t) for t in trajs])
        c.execute(sa.insert(_table(m.RunLease)), leases)
        c.execute(sa.insert(_table(m.TrajectoryClaim)), claims)
        if engine.dialect.name == "postgresql":  # explicit ids: move the sequences past them
            for table in ("benchmark", "task", "run", "trajectory", "modelendpoint", "asset"):
                c.execute(
                    sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
                )


def _runs() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Runs in every shown status, with their trajectories, leases and claims."""
    micro = T0.replace(microsecond=123456)
    runs: list[dict[str, Any]] = [
        {"id": 1, "name": "done run", "benchmark_id": 1, "endpoint_id": 1, "mode": "atomic", "status": "done",
         "budgets": {"max_steps": 8, "ünï": "β"}, "config": {"replay": True}, "created_at": T0,
         "started_at": micro, "finished_at": T0.replace(minute=5)},
        {"id": 2, "name": None, "benchmark_id": 2, "endpoint_id": None, "mode": "react", "status": "running",
         "budgets": None, "config": None, "created_at": micro, "prompt_version": "v\x1b2", "concurrency": 32},
        {"id": 3, "name": "live\x07", "benchmark_id": 3, "endpoint_id": 2, "mode": "code", "status": "running",
         "budgets": [1, "two"], "config": {"unsafe_in_process_sandbox": True, "stopped_because": "budget ü"},
         "created_at": T0},
        {"id": 4, "name": "stale", "benchmark_id": 4, "endpoint_id": 1, "mode": "plan", "status": "running",
         "config": {}, "created_at": T0},
        {"id": 5, "name": "queued-held", "benchmark_id": 1, "endpoint_id": 1, "mode": "step", "status": "running",
         "config": {"queue": True}, "created_at": T0},
        {"id": 6, "name": "queued-idle", "benchmark_id": 1, "endpoint_id": 1, "mode": "atomic", "status": "running",
         "config": {"queue": True, "replay": False}, "created_at": T0},
        {"id": 7, "name": "failed", "benchmark_id": 6, "endpoint_id": 2, "mode": "atomic", "status": "failed",
         "created_at": T0, "started_at": T0, "finished_at": micro},
        {"id": 8, "name": "pending", "benchmark_id": 5, "endpoint_id": None, "mode": "atomic", "status": "pending",
         "created_at": T0},
    ]  # fmt: skip
    statuses = ["done", "failed", "pending", "running", "done", "cancelled\x1b"]
    trajs, claims, tid = [], [], 0
    for run in runs[:7]:
        for k in range(run["id"] * 2):
            tid += 1
            trajs.append({"id": tid, "run_id": run["id"], "task_id": 1 + k, "status": statuses[(k + run["id"]) % 6]})
            if run["id"] in (5, 6):
                held = run["id"] == 5 and k % 2 == 0
                claims.append(
                    {
                        "trajectory_id": tid,
                        "run_id": run["id"],
                        "token": None if k == 3 else f"tok{tid}",
                        "attempts": 1,
                        "expires_at": FAR if held else PAST,
                        "finished_at": T0 if k == 5 else None,
                    }
                )
    lease = {"token": "t", "pid": 1, "acquired_at": T0, "heartbeat_at": T0}
    leases = [
        {**lease, "run_id": 3, "host": "elsewhere.example", "expires_at": FAR},
        {**lease, "run_id": 4, "host": "elsewhere.example", "expires_at": PAST},
    ]
    return runs, trajs, leases, claims


def _table(model: Any) -> Any:
    return model.__table__


def _defaults(model: Any, values: dict[str, Any]) -> dict[str, Any]:
    """The row with the model's defaults for every column not given (explicit None kept: JSON null)."""
    given = {k: v for k, v in values.items() if v is not None and not isinstance(v, dict | list)}
    row = model(**given).model_dump()
    row.update(values)
    return {k: v for k, v in row.items() if k in model.__table__.c and (k != "id" or v is not None)}
