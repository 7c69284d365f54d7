"""Hand-built items and stored runs for the scoring tests (expected values are computed by hand)."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image
from sqlmodel import Session

from annotation import tasks as authoring
from evaluation.scoring.items import Item, JudgeAnswer
from store.blobs import put_asset
from store.models import Event, ModelEndpoint, Run, Trajectory


def ev(
    kind: str, payload: dict[str, Any], ordinal: int | None = None, failed: bool = False, id: int | None = None
) -> dict[str, Any]:
    return {"kind": kind, "payload": payload, "ordinal": ordinal, "failed": failed, "id": id}


def item(task: dict[str, Any] | None = None, events: list[dict[str, Any]] | None = None, **kw: Any) -> Item:
    events = list(events or [])
    for n, e in enumerate(events):
        e["ordinal"] = n if e["ordinal"] is None else e["ordinal"]
        e["id"] = 1000 + n if e["id"] is None else e["id"]
    traj = kw.pop("trajectory", {})
    return Item(
        task={"id": 1, **(task or {})},
        trajectory={"id": kw.pop("traj_id", 1), "status": "done", **traj},
        events=events,
        **kw,
    )


def call(name: str, args: dict[str, Any], call_id: str, **extra: Any) -> dict[str, Any]:
    return ev("tool_call", {"call_id": call_id, "name": name, "arguments": args, **extra})


def res(
    name: str,
    call_id: str,
    text: str = "",
    *,
    ok: bool = True,
    asset_ids: list[int] | None = None,
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return ev(
        "tool_result",
        {"call_id": call_id, "name": name, "ok": ok, "text": text, "data": data or {}, "asset_ids": asset_ids or []},
    )


def answer(text: str) -> dict[str, Any]:
    return ev("answer", {"text": text, "raw": text, "extracted_by": "tag"})


def ja(
    label: str | None = None, *, score: float | None = None, parsed: Any = None, raw: str | None = None
) -> JudgeAnswer:
    return JudgeAnswer(
        label=label, score=score, parsed=parsed, raw_output=raw if raw is not None else label, judge_name="hand"
    )


def png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def stored_run(
    session: Session, benchmark: str, fmt: str, mode: str = "atomic", model: str = "m1", endpoint: str | None = None
) -> Run:
    bench = authoring.ensure_benchmark(session, benchmark, fmt)
    ep = None
    if endpoint:
        ep = ModelEndpoint(name=endpoint, base_url="http://127.0.0.1:9/v1", model=model)
        session.add(ep)
        session.flush()
    run = Run(
        benchmark_id=bench.id or 0, mode=mode, endpoint_id=ep.id if ep else None, name=model, config={"model": model}
    )
    session.add(run)
    session.flush()
    return run


def stored_trajectory(
    session: Session, run: Run, task_id: int, events: list[dict[str, Any]], final_answer: str | None = None
) -> Trajectory:
    traj = Trajectory(run_id=run.id or 0, task_id=task_id, status="done", final_answer=final_answer)
    session.add(traj)
    session.flush()
    for n, e in enumerate(events):
        session.add(
            Event(
                trajectory_id=traj.id or 0,
                ordinal=n,
                kind=e["kind"],
                payload=e["payload"],
                failed=e.get("failed", False),
            )
        )
    session.flush()
    return traj


def stored_png(session: Session, blobs: Any, color: tuple[int, int, int]) -> int:
    return put_asset(session, blobs, png(color), "image/png").id or 0
