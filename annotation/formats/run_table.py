"""Runs as data: a stored run (any benchmark) as two Parquet tables for pandas, polars or DuckDB.

``events.parquet`` holds one row per event, ``trajectories.parquet`` one row per trajectory; the
columns are typed (integers, timestamps in UTC, lists of asset hashes) so an analysis never parses
JSON to count tokens or tool calls. The schema is the README's "Other tools" section; ``payload_json``
keeps the whole event for anything a column leaves out. pyarrow is an optional dependency (extra
``interop``): it is imported only when this writer runs.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from annotation.formats.errors import FormatError
from annotation.formats.run_specs import RunBundle
from store import events as ev

name = "parquet"
EVENTS_FILE = "events.parquet"
TRAJECTORIES_FILE = "trajectories.parquet"
INTEROP_EXTRA = "pip install 'chainmark[interop]'"


def require(module: str) -> Any:
    """The optional module, or a one-line error naming the extra that provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise FormatError(
            module, message=f"is not installed; it comes with the 'interop' extra: {INTEROP_EXTRA}"
        ) from None


def _schemas(pa: Any) -> tuple[Any, Any]:
    ts = pa.timestamp("us", tz="UTC")
    events = pa.schema(
        [
            ("run_id", pa.int64()),
            ("trajectory_id", pa.int64()),
            ("task_id", pa.int64()),
            ("source_id", pa.string()),
            ("ordinal", pa.int32()),
            ("kind", pa.string()),
            ("failed", pa.bool_()),
            ("started_at", ts),
            ("finished_at", ts),
            ("latency_s", pa.float64()),
            ("tool_name", pa.string()),
            ("call_id", pa.string()),
            ("arguments_json", pa.string()),
            ("text", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("total_tokens", pa.int64()),
            ("error", pa.string()),
            ("asset_sha256", pa.list_(pa.string())),
            ("payload_json", pa.string()),
        ]
    )
    trajectories = pa.schema(
        [
            ("run_id", pa.int64()),
            ("run_name", pa.string()),
            ("benchmark", pa.string()),
            ("model", pa.string()),
            ("mode", pa.string()),
            ("trajectory_id", pa.int64()),
            ("task_id", pa.int64()),
            ("source_id", pa.string()),
            ("task_revision", pa.int32()),
            ("category", pa.string()),
            ("status", pa.string()),
            ("final_answer", pa.string()),
            ("events", pa.int32()),
            ("tool_calls", pa.int32()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("total_tokens", pa.int64()),
            ("latency_s", pa.float64()),
            ("error", pa.string()),
            ("started_at", ts),
            ("finished_at", ts),
            ("usage_json", pa.string()),
        ]
    )
    return events, trajectories


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _text(kind: str, p: dict[str, Any]) -> str | None:
    """The event's human-readable content, whatever its kind calls it."""
    if kind == ev.USER_MESSAGE or kind == ev.MODEL_MESSAGE:
        content = p.get("content")
        if isinstance(content, list):  # OpenAI content parts: keep the text parts
            return (
                "\n".join(
                    str(part.get("text")) for part in content if isinstance(part, dict) and part.get("type") == "text"
                )
                or None
            )
        return content if isinstance(content, str) else None
    if kind == ev.CODE_EXEC:
        return p.get("code")
    if kind == ev.PLAN_CALL:
        return p.get("description")
    if kind == ev.ERROR:
        return p.get("message")
    for key in ("text", "raw"):
        if isinstance(p.get(key), str):
            return p[key]
    return None


def _tool(kind: str, p: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(tool name, call id, arguments as JSON) for the kinds that have them."""
    if kind in (ev.TOOL_CALL, ev.TOOL_RESULT):
        args = p.get("arguments") if kind == ev.TOOL_CALL else None
        return p.get("name"), p.get("call_id") or None, _json(args)
    if kind == ev.PLAN_CALL:
        return p.get("tool_name"), None, _json(p.get("params"))
    if kind == ev.MODEL_MESSAGE and p.get("tool_calls"):
        calls = p["tool_calls"]
        names = ",".join(str(c.get("name")) for c in calls if isinstance(c, dict))
        return names or None, None, _json([c.get("parsed", c.get("arguments")) for c in calls if isinstance(c, dict)])
    return None, None, None


def _error(kind: str, p: dict[str, Any], failed: bool) -> str | None:
    if kind == ev.ERROR:
        return f"{p.get('type') or 'error'}: {p.get('message') or ''}".rstrip(": ")
    if p.get("error"):
        return str(p["error"])
    if kind == ev.CODE_EXEC and (p.get("timed_out") or p.get("exit_code") not in (0, None)):
        return p.get("killed_reason") or ("timed out" if p.get("timed_out") else f"exit code {p.get('exit_code')}")
    return "invalid" if failed else None


def event_rows(run: RunBundle) -> list[dict[str, Any]]:
    rows = []
    for tb in run.trajectories:
        for e in tb.events:
            p = e.payload if isinstance(e.payload, dict) else {}
            raw_usage = p.get("usage")
            usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
            tool_name, call_id, args = _tool(e.kind, p)
            started, finished = _utc(e.started_at), _utc(e.finished_at)
            rows.append(
                {
                    "run_id": run.run.id,
                    "trajectory_id": tb.trajectory.id,
                    "task_id": tb.task.id,
                    "source_id": tb.task.source_id,
                    "ordinal": e.ordinal,
                    "kind": e.kind,
                    "failed": bool(e.failed),
                    "started_at": started,
                    "finished_at": finished,
                    "latency_s": (finished - started).total_seconds() if started and finished else None,
                    "tool_name": tool_name,
                    "call_id": call_id,
                    "arguments_json": args,
                    "text": _text(e.kind, p),
                    "prompt_tokens": _int(usage.get("prompt_tokens")),
                    "completion_tokens": _int(usage.get("completion_tokens")),
                    "total_tokens": _int(usage.get("total_tokens")),
                    "error": _error(e.kind, p, e.failed),
                    "asset_sha256": [asset.sha256 for _, asset in tb.event_assets.get(e.id, [])],
                    "payload_json": _json(p),
                }
            )
    return rows


def trajectory_rows(run: RunBundle) -> list[dict[str, Any]]:
    model = run.endpoint.model if run.endpoint is not None else None
    rows = []
    for tb in run.trajectories:
        t = tb.trajectory
        usage = t.usage if isinstance(t.usage, dict) else {}
        calls = sum(1 for e in tb.events if e.kind in (ev.TOOL_CALL, ev.PLAN_CALL))
        latency = usage.get("latency_s")
        rows.append(
            {
                "run_id": run.run.id,
                "run_name": run.run.name,
                "benchmark": run.benchmark.name,
                "model": model,
                "mode": run.run.mode,
                "trajectory_id": t.id,
                "task_id": tb.task.id,
                "source_id": tb.task.source_id,
                "task_revision": t.task_revision,
                "category": tb.task.category,
                "status": t.status,
                "final_answer": t.final_answer,
                "events": len(tb.events),
                "tool_calls": _int(usage.get("tool_calls")) if _int(usage.get("tool_calls")) is not None else calls,
                "prompt_tokens": _int(usage.get("prompt_tokens")),
                "completion_tokens": _int(usage.get("completion_tokens")),
                "total_tokens": _int(usage.get("total_tokens")),
                "latency_s": float(latency) if isinstance(latency, (int, float)) else None,
                "error": t.error,
                "started_at": _utc(t.started_at),
                "finished_at": _utc(t.finished_at),
                "usage_json": _json(usage),
            }
        )
    return rows


def read_run(path: Path, **_: Any) -> Any:
    raise FormatError(path, message="parquet is an export for analysis; import runs in their harness's own format")


def write_run(run: RunBundle, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    """Write ``events.parquet`` and ``trajectories.parquet`` into the folder ``path``."""
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    events_schema, traj_schema = _schemas(pa)
    path.mkdir(parents=True, exist_ok=True)
    out = []
    for file, schema, rows in (
        (EVENTS_FILE, events_schema, event_rows(run)),
        (TRAJECTORIES_FILE, traj_schema, trajectory_rows(run)),
    ):
        table = pa.Table.from_pylist(rows, schema=schema)
        target = path / file
        pq.write_table(table, target, compression="zstd")
        out.append(target)
    return out
