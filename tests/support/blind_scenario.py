"""The blind-rater scenario of issue 32, from real rows: erin still owes blind preferences between
runs 1 (gpt-mid) and 17 (gpt-good) and a blind rating of trajectory 1; dan has judged every pair
(so a preference leaderboard exists), bob has rated trajectory 1, a judge gave every trajectory a
verdict. ``SECRETS`` are what erin must not see anywhere until she has finished."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from annotation import tasks as authoring
from annotation.review import preferences as prefs
from annotation.review import scales as scaling
from annotation.review.annotators import add_annotator
from annotation.review.assignments import assign
from annotation.review.ratings import rate
from annotation.review.targets import Target
from store import events as ev
from store import session_scope
from store.models import Event, Judge, ModelEndpoint, Run, Trajectory, Verdict

RUN_MID, RUN_GOOD = 1, 17
MODELS = {RUN_MID: ("ep-mid", "gpt-mid"), RUN_GOOD: ("ep-good", "gpt-good")}
GOLD = ["4", "5", "6"]
ANSWERS = {RUN_MID: ["4", "0", "6"], RUN_GOOD: ["4", "5", "6"]}  # gpt-mid: 2 of 3 right; gpt-good: 3 of 3
VERDICT_MARK = "jv-"  # every judge label starts with it
RATIONALE = "judge-x-rationale"
SECRETS = (
    "gpt-mid",
    "gpt-good",
    "ep-mid",
    "ep-good",
    VERDICT_MARK,
    RATIONALE,
    "0.67",  # gpt-mid's accuracy (2 of 3), however it is printed
    "66.7",
    "0.667",
)


@dataclass
class Scenario:
    tasks: list[int] = field(default_factory=list)
    trajectories: dict[int, list[int]] = field(default_factory=dict)  # run -> its trajectories, task order
    erin_items: list[int] = field(default_factory=list)  # erin's preference items (assignment ids)

    @property
    def trajectory_1(self) -> int:
        return self.trajectories[RUN_MID][0]


def seed_blind_scenario(engine: Engine) -> Scenario:
    """Build the scenario in a fresh database (run ids 1 and 17, trajectory 1 is run 1's first)."""
    sc = Scenario()
    with session_scope(engine, "seed") as s:
        scaling.ensure_builtin_scales(s)
        bench = authoring.ensure_benchmark(s, "blind-gta", "gta", tool_set="gta")
        for i, gold in enumerate(GOLD):
            task = authoring.create_task(
                s, bench, f"How many cups are on shelf {i + 1}?", answer_spec={"kind": "exact", "value": gold}
            )
            sc.tasks.append(task.id or 0)
        judge = Judge(name="judge-x", template="yes-no", params={"scale": "yes-no"})
        s.add(judge)
        s.flush()
        for run_id, (endpoint, model) in MODELS.items():
            ep = ModelEndpoint(name=endpoint, base_url="http://127.0.0.1:9/v1", model=model)
            s.add(ep)
            s.flush()
            s.add(
                Run(
                    id=run_id,
                    name=f"{model} sweep",
                    benchmark_id=bench.id or 0,
                    endpoint_id=ep.id,
                    mode="atomic",
                    status="done",
                )
            )
            s.flush()
            sc.trajectories[run_id] = []
            for task_id, answer, gold in zip(sc.tasks, ANSWERS[run_id], GOLD):
                traj = Trajectory(run_id=run_id, task_id=task_id, status="done", final_answer=answer)
                s.add(traj)
                s.flush()
                s.add(Event(trajectory_id=traj.id or 0, ordinal=0, kind=ev.ANSWER, payload=ev.answer(answer)))
                label = "jv-yes" if answer == gold else "jv-no"
                s.add(
                    Verdict(
                        judge_id=judge.id or 0,
                        target_kind="trajectory",
                        target_id=traj.id or 0,
                        label=label,
                        score=1.0 if label == "jv-yes" else 0.0,
                        rationale=f"{RATIONALE}: {label}",
                    )
                )
                sc.trajectories[run_id].append(traj.id or 0)
        for name, role in (("erin", "annotator"), ("dan", "annotator"), ("bob", "annotator"), ("rev", "reviewer")):
            add_annotator(s, name, role)
        assert sc.trajectory_1 == 1, "the scenario needs a fresh database"
        assign(s, "yes-no", [Target("trajectory", sc.trajectory_1)], ["erin", "bob"], 2, blind=True)
        prefs.assign_pairs(s, RUN_MID, RUN_GOOD, ["erin", "dan"], 2)
    with session_scope(engine, "bob") as s:
        rate(s, "bob", "yes-no", Target("trajectory", sc.trajectory_1), "no")
    with session_scope(engine, "dan") as s:
        for item in prefs.queue(s, "dan"):
            prefs.record(s, "dan", item.assignment_id, "a")
    with session_scope(engine, "erin") as s:
        sc.erin_items = [item.assignment_id for item in prefs.queue(s, "erin")]
    return sc


def finish_erin(engine: Engine, sc: Scenario) -> None:
    """erin rates trajectory 1 and judges every pair: nothing is pending, nothing is hidden."""
    with session_scope(engine, "erin") as s:
        rate(s, "erin", "yes-no", Target("trajectory", sc.trajectory_1), "yes")
        for item in sc.erin_items:
            prefs.record(s, "erin", item, "b")
