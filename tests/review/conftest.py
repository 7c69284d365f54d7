"""A small world to review: two tasks in two categories, two models' runs, trajectories, events,
checkpoint results, and two judges that already gave verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from sqlalchemy.engine import Engine

from annotation import tasks as authoring
from store import session_scope
from store.models import CheckpointResult, Event, Judge, ModelEndpoint, Run, Trajectory, Verdict
from tests.support.must import must


@dataclass
class World:
    tasks: list[int] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)
    trajectories: list[int] = field(default_factory=list)  # run 0's first, then run 1's
    checkpoint_results: list[int] = field(default_factory=list)
    verdicts: dict[tuple[str, int], int] = field(default_factory=dict)  # (judge, trajectory) -> verdict id


@pytest.fixture
def world(engine: Engine) -> World:
    w = World()
    with session_scope(engine, actor="builder") as s:
        bench = authoring.ensure_benchmark(s, "demo-review")
        checkpoint_of: dict[int, int] = {}
        for i, cat in enumerate(["Style", "Style", "Temp", "Temp"]):
            t = authoring.create_task(s, bench, f"question {i}?", category=cat)
            cp = authoring.add_checkpoint(s, must(t.id), key="cp1", description="crop the sign")
            w.tasks.append(must(t.id))
            checkpoint_of[t.id] = cp.id
        for m in ("model-a", "model-b"):
            ep = ModelEndpoint(name=m, base_url="http://127.0.0.1:1/v1", model=m)
            s.add(ep)
            s.flush()
            run = Run(benchmark_id=must(bench.id), endpoint_id=ep.id, mode="atomic", status="done")
            s.add(run)
            s.flush()
            w.runs.append(must(run.id))
        for run_id in w.runs:
            for tid in w.tasks:
                traj = Trajectory(run_id=run_id, task_id=tid, status="done", final_answer=f"answer {tid}")
                s.add(traj)
                s.flush()
                w.trajectories.append(must(traj.id))
                s.add(
                    Event(
                        trajectory_id=must(traj.id),
                        ordinal=0,
                        kind="tool_call",
                        payload={"name": "crop", "arguments": {"box": [0, 0, 1, 1]}},
                    )
                )
                cr = CheckpointResult(
                    trajectory_id=must(traj.id),
                    checkpoint_id=checkpoint_of[tid],
                    passed=True,
                    method="judge",
                    detail={"judge_said": "PASS"},
                )
                s.add(cr)
                s.flush()
                w.checkpoint_results.append(must(cr.id))
        # two judges that answer yes/no about whole trajectories
        strict = Judge(name="strict", template="isg.v1", params={"scale": "yes-no"})
        lenient = Judge(name="lenient", template="isg.v1", params={"scale": "yes-no"})
        s.add(strict)
        s.add(lenient)
        s.flush()
        labels = {
            "strict": ["yes", "no", "no", "yes", "no", "no", "yes", "no"],
            "lenient": ["yes", "yes", "no", "yes", "yes", "yes", "yes", "no"],
        }
        for judge in (strict, lenient):
            for traj_id, label in zip(w.trajectories, labels[judge.name]):
                v = Verdict(
                    judge_id=must(judge.id),
                    target_kind="trajectory",
                    target_id=traj_id,
                    label=label,
                    rationale=f"{judge.name} thinks {label}",
                )
                s.add(v)
                s.flush()
                w.verdicts[(judge.name, traj_id)] = v.id
    return w
