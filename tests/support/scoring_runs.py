"""Generated runs for scoring at scale: N trajectories of GTA, Agentic-MME or VTC shape, written with
Core bulk inserts (seconds for 10k), so tests and ``bench/bench_scoring.py`` can run the real
``chainmark score`` on a database. The in-memory ``Item`` builders are the same shapes."""

from __future__ import annotations

import random
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evaluation.scoring.items import Item
from store.models import Benchmark, Checkpoint, Event, ModelEndpoint, OrderingConstraint, Run, Task, Trajectory
from tests.support.must import must

PROFILES = {"gta": "react", "agentic-mme": "atomic", "vtc": "atomic"}  # profile → run mode


def _ev(kind: str, payload: dict[str, Any], n: int) -> dict[str, Any]:
    return {"kind": kind, "payload": payload, "ordinal": n, "failed": False, "id": n}


def gta_item(i: int, rng: random.Random) -> Item:
    tools = ["OCR", "Calculator", "TextToBbox", "DrawBox", "GoogleSearch"]
    events: list[dict[str, Any]] = []
    for k in range(rng.randint(1, 4)):
        name = rng.choice(tools)
        events += [
            _ev("tool_call", {"call_id": str(k), "name": name, "arguments": {"x": k}}, len(events)),
            _ev("tool_result", {"call_id": str(k), "name": name, "ok": True, "text": "r"}, len(events) + 1),
        ]
    events.append(_ev("answer", {"text": f"the answer is {rng.randint(56, 59)} days"}, len(events)))
    dialogs = [
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {}}}]},
        {"role": "assistant", "content": "58"},
    ]
    return Item(
        task={
            "id": i,
            "source_record": {
                "dialogs": dialogs,
                "gt_answer": {"whitelist": [["58"], ["days", "day"]], "blacklist": None},
            },
        },
        trajectory={"id": i, "status": "done"},
        events=events,
    )


def amme_item(i: int, rng: random.Random) -> Item:
    ops = ["crop", "rotate", "enhance", "resize"]
    events: list[dict[str, Any]] = []
    for k in range(rng.randint(1, 6)):
        op = rng.choice(ops)
        events += [
            _ev("tool_call", {"call_id": str(k), "name": op, "arguments": {"image_index": k}}, len(events)),
            _ev("tool_result", {"call_id": str(k), "name": op, "ok": True, "asset_ids": []}, len(events) + 1),
        ]
    events.append(_ev("answer", {"text": f"It is {rng.randint(1, 12)}"}, len(events)))
    cps = [
        {"id": 1, "key": "V1", "axis": "V", "tools": ["crop"], "code_check": {"verifier": "verify_crop_ast"}},
        {"id": 2, "key": "V2", "axis": "V", "tools": [], "code_check": {"verifier": "require_op:rotate"}},
        {"id": 3, "key": "R1", "axis": "R", "answer_check": {"match_type": "numeric", "target": "7", "tolerance": 0}},
    ]
    return Item(
        task={
            "id": i,
            "level": str(rng.randint(1, 3)),
            "reference_tool_calls": 2,
            "max_tool_calls": 5,
            "penalty_per_extra_call": 0.1,
            "answer_spec": {"kind": "contains", "value": "7"},
        },
        trajectory={"id": i, "status": "done"},
        events=events,
        checkpoints=cps,
        ordering=[{"key": "O", "sequence": ["V1", "V2"], "max_gap": 2}],
    )


def vtc_item(i: int, rng: random.Random) -> Item:
    events: list[dict[str, Any]] = []
    prev = "/data/in.jpg"
    for k in range(rng.randint(0, 5)):
        out = f"/w/{i}_{k}.png"
        events += [
            _ev("tool_call", {"call_id": str(k), "name": "opencv_crop", "arguments": {"image": prev}}, len(events)),
            _ev(
                "tool_result",
                {"call_id": str(k), "name": "opencv_crop", "ok": True, "text": f"ok\n\nEdited Image Path: {out}"},
                len(events) + 1,
            ),
        ]
        prev = out if rng.random() < 0.7 else prev
    events.append(_ev("answer", {"text": rng.choice(["B", "B. five", "the answer is B", "C"])}, len(events)))
    return Item(
        task={
            "id": i,
            "category": rng.choice(["chart", "ocr", "math"]),
            "answer_spec": {"kind": "mcq", "letter": "B", "options": {"A": "4", "B": "5", "C": "6"}},
            "source_record": {"model_tools_gt": '["Crop", "Resize", "Sharpen"]'},
        },
        trajectory={"id": i, "status": "done"},
        events=events,
    )


BUILDERS = {"gta": gta_item, "agentic-mme": amme_item, "vtc": vtc_item}


def _rows(model: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Column values with the model's defaults filled in, for a Core bulk insert."""
    return [{k: v for k, v in model(**kw).model_dump().items() if k != "id"} for kw in items]


def write_run(engine: Engine, profile: str, n: int, seed: int = 7) -> int:
    """A benchmark named after ``profile`` with n tasks and one finished run over them; the run id."""
    rng = random.Random(seed)
    items = [BUILDERS[profile](i, rng) for i in range(n)]
    with engine.begin() as c:
        c.execute(
            sa.insert(Benchmark.__table__),  # type: ignore[attr-defined]
            _rows(
                Benchmark,
                [  # type: ignore[attr-defined]
                    {"name": f"gen-{profile}", "source_format": profile}
                ],
            ),
        )
        bench_id = c.execute(sa.select(Benchmark.id).where(Benchmark.name == f"gen-{profile}")).scalar_one()
        task_fields = (
            "level",
            "category",
            "answer_spec",
            "source_record",
            "reference_tool_calls",
            "max_tool_calls",
            "penalty_per_extra_call",
        )
        c.execute(
            sa.insert(Task.__table__),  # type: ignore[attr-defined]
            _rows(
                Task,
                [  # type: ignore[attr-defined]
                    {
                        "benchmark_id": bench_id,
                        "source_id": f"{profile}-{i}",
                        "query": f"question {i}",
                        **{k: it.task[k] for k in task_fields if k in it.task},
                    }
                    for i, it in enumerate(items)
                ],
            ),
        )
        task_ids = [r[0] for r in c.execute(sa.select(Task.id).where(Task.benchmark_id == bench_id).order_by(Task.id))]
        cps = [
            {
                "task_id": tid,
                "ordinal": k,
                **{f: cp[f] for f in ("key", "axis", "tools", "code_check", "answer_check") if f in cp},
            }
            for tid, it in zip(task_ids, items)
            for k, cp in enumerate(it.checkpoints)
        ]
        if cps:
            c.execute(sa.insert(Checkpoint.__table__), _rows(Checkpoint, cps))  # type: ignore[attr-defined]
        orders = [{"task_id": tid, **o} for tid, it in zip(task_ids, items) for o in it.ordering]
        if orders:
            c.execute(sa.insert(OrderingConstraint.__table__), _rows(OrderingConstraint, orders))  # type: ignore[attr-defined]
        c.execute(
            sa.insert(ModelEndpoint.__table__),  # type: ignore[attr-defined]
            _rows(
                ModelEndpoint,
                [  # type: ignore[attr-defined]
                    {"name": f"gen-{profile}", "base_url": "http://127.0.0.1:9/v1", "model": "gen-model"}
                ],
            ),
        )
        ep_id = c.execute(sa.select(ModelEndpoint.id).where(ModelEndpoint.name == f"gen-{profile}")).scalar_one()
        c.execute(
            sa.insert(Run.__table__),  # type: ignore[attr-defined]
            _rows(
                Run,
                [  # type: ignore[attr-defined]
                    {
                        "benchmark_id": bench_id,
                        "endpoint_id": ep_id,
                        "kind": "model",
                        "mode": PROFILES[profile],
                        "concurrency": 4,
                        "status": "done",
                    }
                ],
            ),
        )
        run_id = c.execute(sa.select(sa.func.max(Run.id))).scalar_one()
        answers = [next((e["payload"]["text"] for e in it.events if e["kind"] == "answer"), None) for it in items]
        c.execute(
            sa.insert(Trajectory.__table__),  # type: ignore[attr-defined]
            _rows(
                Trajectory,
                [  # type: ignore[attr-defined]
                    {
                        "run_id": run_id,
                        "task_id": tid,
                        "task_revision": 1,
                        "status": "done",
                        "final_answer": a,
                        "usage": {"total_tokens": 10, "tool_calls": sum(e["kind"] == "tool_call" for e in it.events)},
                    }
                    for tid, it, a in zip(task_ids, items, answers)
                ],
            ),
        )
        traj_ids = [
            r[0] for r in c.execute(sa.select(Trajectory.id).where(Trajectory.run_id == run_id).order_by(Trajectory.id))
        ]
        c.execute(
            sa.insert(Event.__table__),  # type: ignore[attr-defined]
            _rows(
                Event,
                [  # type: ignore[attr-defined]
                    {"trajectory_id": trid, "ordinal": e["ordinal"], "kind": e["kind"], "payload": e["payload"]}
                    for trid, it in zip(traj_ids, items)
                    for e in it.events
                ],
            ),
        )
    return int(must(run_id))
