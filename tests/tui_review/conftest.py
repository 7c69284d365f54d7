"""Fixtures for the run and review screens: an app on the test database and a seeded review study.

The study is built from real rows: a benchmark with guidelines, tasks with an image, a run whose
trajectories have events, checkpoint results, two judges' verdicts, three annotators and blind
assignments — everything a reviewer sees, deterministic so screenshots repeat.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from sqlalchemy.engine import Engine

from annotation import tasks as authoring
from annotation.review.annotators import add_annotator
from annotation.review.assignments import assign
from annotation.review.ratings import rate
from annotation.review.targets import Target
from store import events as ev
from store import session_scope
from store.blobs import FolderBlobStore, put_asset
from store.models import Checkpoint, CheckpointResult, Event, EventAsset, Judge, Run, Trajectory, Verdict
from tests.support.workers import wait_for_workers
from tests.tui.conftest import app_on, no_cursor_blink  # noqa: F401  (no_cursor_blink: an autouse fixture here too)
from tui.app import ChainmarkApp

FIXED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture
def make_tui(engine: Engine, db_path: Path) -> Callable[..., ChainmarkApp]:
    def build(actor: str = "ann", **kwargs: Any) -> ChainmarkApp:
        return app_on(engine, db_path, actor, **kwargs)

    return build


def png(colour: str = "#3060c0", size: tuple[int, int] = (160, 100)) -> bytes:
    im = Image.new("RGB", size, colour)
    ImageDraw.Draw(im).rectangle([size[0] // 4, size[1] // 4, size[0] // 2, size[1] // 2], fill="white")
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


async def settle(pilot: Any, app: ChainmarkApp, rounds: int = 4) -> None:
    """Let messages flow and workers finish until the screen has loaded everything it asked for
    (a load replaced by a newer one is cancelled, and counts as finished)."""
    for _ in range(rounds):
        await pilot.pause()
        await wait_for_workers(app)
    await pilot.pause()


def drawn(widget: Any) -> str:
    """What a widget puts on the screen, line by line (as drawn: wrapping and collapsing count)."""
    from textual.geometry import Region

    lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return "\n".join(strip.text.rstrip() for strip in lines)


JUDGE_LABELS = {  # trajectory n → (judge-a, judge-b) verdicts on yes-no
    0: ("yes", "yes"),
    1: ("no", "yes"),
    2: ("no", "no"),
    3: ("yes", "no"),
    4: ("yes", "yes"),
}


def seed_study(engine: Engine, blobs: FolderBlobStore, n: int = 5) -> dict[str, Any]:
    """Five tasks, one run, five trajectories with events, two judges, three annotators."""
    ids: dict[str, Any] = {"tasks": [], "trajectories": [], "checkpoint_results": [], "verdicts": []}
    with session_scope(engine, "seed") as s:
        bench = authoring.ensure_benchmark(
            s, "demo-gta", "gta", tool_set="gta", guidelines="Rate the final answer only; ignore style."
        )
        run = Run(name="scripted run", benchmark_id=bench.id or 0, mode="atomic", status="done", created_at=FIXED)
        s.add(run)
        s.flush()
        ids["run"] = run.id
        judges = [
            Judge(name="judge-a", template="yes-no", params={"scale": "yes-no"}, created_at=FIXED),
            Judge(name="judge-b", template="yes-no", params={"scale": "yes-no"}, created_at=FIXED),
        ]
        s.add_all(judges)
        s.flush()
        for i in range(n):
            task = authoring.create_task(
                s,
                bench,
                f"How many cups are on table {i + 1}?",
                category="counting",
                answer_spec={"kind": "exact", "value": str(i + 2)},
            )
            authoring.attach_asset(
                s, blobs, task.id or 0, png(["#3060c0", "#c03030", "#30a050", "#a0a030", "#8040c0"][i % 5])
            )
            ocr = authoring.add_step(
                s,
                task.id or 0,
                thought="Read the label first.",
                tool_name="OCR",
                tool_args={"image": "image_1"},
                result_text=f"TABLE {i + 1}",
            )
            count = authoring.add_step(
                s,
                task.id or 0,
                tool_name="CountGivenObject",
                tool_args={"image": "image_1", "text": "cup"},
                result_text=str(i + 2),
            )
            authoring.add_step(s, task.id or 0, final_answer=str(i + 2))
            cp = Checkpoint(
                task_id=task.id or 0,
                step_id=ocr.id,
                key="cp1",
                axis="V",
                description="OCR the table label",
                tools=["OCR"],
                visual_check={"question": "which table?", "expected_answer": str(i + 1)},
            )
            cp2 = Checkpoint(
                task_id=task.id or 0,
                step_id=count.id,
                key="cp2",
                axis="V",
                ordinal=1,
                description="count the cups",
                tools=["CountGivenObject"],
            )
            s.add_all([cp, cp2])
            traj = Trajectory(
                run_id=run.id or 0,
                task_id=task.id or 0,
                task_revision=task.revision,
                status="done",
                final_answer=str(i + 2 + (i % 2)),
                usage={"prompt_tokens": 100, "completion_tokens": 20},
                started_at=FIXED,
                finished_at=FIXED,
            )
            s.add(traj)
            s.flush()
            out_asset = put_asset(s, blobs, png("#202020"), "image/png")
            rows = [
                Event(
                    trajectory_id=traj.id or 0,
                    ordinal=0,
                    kind=ev.MODEL_MESSAGE,
                    started_at=FIXED,
                    payload={"content": "I will read the label.", "tool_calls": [{"id": "c1", "name": "OCR"}]},
                ),
                Event(
                    trajectory_id=traj.id or 0,
                    ordinal=1,
                    kind=ev.TOOL_CALL,
                    started_at=FIXED,
                    payload=ev.tool_call("OCR", {"image": "image_1"}, "c1"),
                ),
                Event(
                    trajectory_id=traj.id or 0,
                    ordinal=2,
                    kind=ev.TOOL_RESULT,
                    started_at=FIXED,
                    payload=ev.tool_result("OCR", f"TABLE {i + 1}", call_id="c1", asset_ids=[out_asset.id or 0]),
                ),
                Event(
                    trajectory_id=traj.id or 0,
                    ordinal=3,
                    kind=ev.ANSWER,
                    started_at=FIXED,
                    payload=ev.answer(str(i + 2 + (i % 2))),
                ),
            ]
            s.add_all(rows)
            s.flush()
            s.add(EventAsset(event_id=rows[2].id or 0, asset_id=out_asset.id or 0))
            cr = CheckpointResult(
                trajectory_id=traj.id or 0,
                checkpoint_id=cp.id or 0,
                passed=i % 2 == 0,
                matched_event_id=rows[1].id,
                created_at=FIXED,
            )
            s.add(cr)
            s.add(
                CheckpointResult(trajectory_id=traj.id or 0, checkpoint_id=cp2.id or 0, passed=False, created_at=FIXED)
            )
            s.flush()
            if i == 0:
                s.add(
                    Verdict(
                        judge_id=judges[0].id or 0,
                        target_kind="event",
                        target_id=rows[2].id or 0,
                        label="faithful",
                        rationale="the OCR result is read correctly",
                        created_at=FIXED,
                    )
                )
            a, b = JUDGE_LABELS[i % 5]
            for judge, label in zip(judges, (a, b)):
                v = Verdict(
                    judge_id=judge.id or 0,
                    target_kind="trajectory",
                    target_id=traj.id or 0,
                    label=label,
                    score=1.0 if label == "yes" else 0.0,
                    rationale=f"{judge.name}: the answer {'matches' if label == 'yes' else 'differs from'} "
                    f"the reference",
                    created_at=FIXED,
                )
                s.add(v)
                s.flush()
                ids["verdicts"].append(v.id)
            ids["tasks"].append(task.id)
            ids["trajectories"].append(traj.id)
            ids["checkpoint_results"].append(cr.id)
        for name, role in (("ann", "annotator"), ("bob", "annotator"), ("rev", "reviewer")):
            add_annotator(s, name, role)
        targets = [Target("trajectory", t) for t in ids["trajectories"]]
        assign(s, "yes-no", targets, ["ann", "bob"], 2, blind=True)
    return ids


def rate_as(engine: Engine, who: str, values: list[str], trajectories: list[int]) -> None:
    with session_scope(engine, who) as s:
        for tid, value in zip(trajectories, values):
            rate(s, who, "yes-no", Target("trajectory", tid), value)


@pytest.fixture
def study(engine: Engine, blobs: FolderBlobStore) -> dict[str, Any]:
    return seed_study(engine, blobs)


SOLVER_CODE = "from sympy import symbols\n\ndef solution():\n    x = symbols('x')\n    return str(x + 40)"
CROP_CODE = (
    "from PIL import Image\nim = Image.open(ORIGINAL_IMAGE_PATH)\nfor i in range(30):\n    print(f'cup {i + 1}')"
)


def seed_transcript(engine: Engine) -> dict[str, Any]:
    """A code-mode trajectory with a GTA Solver call: code in a ``<code>`` block and in a tool argument,
    a 30-line output, model usage and timestamps 2.5 s / 0.75 s / 1.25 s apart, Rich markup in the data."""
    from datetime import timedelta

    def at(seconds: float) -> datetime:
        return FIXED + timedelta(seconds=seconds)

    with session_scope(engine, "seed") as s:
        bench = authoring.ensure_benchmark(s, "demo-code", "gta", tool_set="gta")
        task = authoring.create_task(
            s,
            bench,
            "How many cups? Then solve x + 40.",
            category="counting",
            answer_spec={"kind": "exact", "value": "42"},
        )
        run = Run(name="code run", benchmark_id=bench.id or 0, mode="code", status="done", created_at=FIXED)
        s.add(run)
        s.flush()
        traj = Trajectory(
            run_id=run.id or 0,
            task_id=task.id or 0,
            task_revision=task.revision,
            status="done",
            final_answer="[V] 42 (sympy)",
            started_at=FIXED,
            finished_at=at(8),
        )
        s.add(traj)
        s.flush()
        tid = traj.id or 0
        usage = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280}
        rows: list[tuple[str, dict[str, Any], float, float]] = [
            (ev.USER_MESSAGE, {"role": "user", "content": "How many cups? Then solve x + 40."}, 0, 0),
            (
                ev.MODEL_MESSAGE,
                {
                    "content": f"I will count the cups.\n<code>\n{CROP_CODE}\n</code>",
                    "tool_calls": [],
                    "usage": usage,
                    "finish_reason": "stop",
                },
                0,
                2.5,
            ),
            (
                ev.CODE_EXEC,
                {
                    "code": CROP_CODE,
                    "stdout": "".join(f"cup {i + 1}\n" for i in range(30)),
                    "stderr": "",
                    "exit_code": 0,
                    "timed_out": False,
                    "ops": [],
                    "asset_ids": [],
                    "duration_s": 0.75,
                },
                2.5,
                3.3,
            ),
            (
                ev.MODEL_MESSAGE,
                {
                    "content": "[bold]Solve[/bold] it with the Solver.",
                    "tool_calls": [{"id": "s1", "name": "Solver", "arguments": json.dumps({"command": SOLVER_CODE})}],
                    "usage": {"prompt_tokens": 1400, "completion_tokens": 60},
                    "finish_reason": "tool_calls",
                },
                3.5,
                5,
            ),
            (ev.TOOL_CALL, ev.tool_call("Solver", {"command": SOLVER_CODE}, "s1"), 5, 5),
            (ev.TOOL_RESULT, ev.tool_result("Solver", "x + 40", call_id="s1"), 5, 6.25),
            (ev.ANSWER, ev.answer("[V] 42 (sympy)"), 7, 7),
        ]
        for n, (kind, payload, start, end) in enumerate(rows):
            s.add(
                Event(
                    trajectory_id=tid, ordinal=n, kind=kind, payload=payload, started_at=at(start), finished_at=at(end)
                )
            )
    return {"trajectory": tid, "run": run.id, "task": task.id}


@pytest.fixture
def transcript(engine: Engine) -> dict[str, Any]:
    return seed_transcript(engine)
