"""`chainmark prefs` end to end on a SQLite file: pairs handed out with overlap, blind items (A/B only),
judgements stored in canonical order, the Bradley–Terry leaderboard and the reviewers' agreement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from store import session_scope
from store.models import Assignment, AuditEvent, ModelEndpoint, Preference, Run, Trajectory
from tui.cli import cli

from .conftest import World

ANSWERS = ("forty-two", "seven", "three")  # run 0's, run 1's, run 2's answers: best first


def run(db: Path, *args: str, ok: bool = True) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def run_json(db: Path, *args: str) -> Any:
    return json.loads(run(db, *args, "--json").output)


def third_run(engine: Engine, world: World) -> None:
    """model-c answers the same tasks; every run gets answers that say which is better."""
    with session_scope(engine, "builder") as s:
        first = s.get(Run, world.runs[0])
        assert first is not None
        ep = ModelEndpoint(name="model-c", base_url="http://127.0.0.1:1/v1", model="model-c")
        s.add(ep)
        s.flush()
        r = Run(benchmark_id=first.benchmark_id, endpoint_id=ep.id, mode="atomic", status="done", name="third run")
        s.add(r)
        s.flush()
        world.runs.append(r.id or 0)
        for tid in world.tasks:
            s.add(Trajectory(run_id=r.id or 0, task_id=tid, status="done"))
        s.flush()
        for t in s.exec(select(Trajectory)).all():
            t.final_answer = f"{ANSWERS[world.runs.index(t.run_id)]} (says model-{'abc'[world.runs.index(t.run_id)]})"


def better_side(view: dict[str, Any]) -> str:
    rank = {a: i for i, a in enumerate(ANSWERS)}
    a, b = (view["answers"][k]["final_answer"].split(" ")[0] for k in ("A", "B"))
    return "a" if rank[a] < rank[b] else "b"


def test_assign_judge_blind_leaderboard_and_agreement(db_path: Path, engine: Engine, world: World) -> None:
    third_run(engine, world)
    r0, r1, r2 = world.runs
    for name in ("ann", "bob"):
        run(db_path, "annotators", "add", name)
    out = run_json(db_path, "prefs", "assign", str(r1), str(r0), "--annotators", "ann,bob", "--overlap", "2")
    assert out["runs"] == [r0, r1] and out["tasks"] == world.tasks and len(out["items"]) == 8
    assert (
        run_json(db_path, "prefs", "assign", str(r0), str(r1), "--annotators", "ann,bob", "--overlap", "2")["items"]
        == []
    )  # nothing twice
    assert (
        "4 new preference item(s) for 4 task(s)"
        in run(db_path, "prefs", "assign", str(r1), str(r2), "--annotators", "ann,bob").output
    )
    with session_scope(engine) as s:  # the ratings' balancing: 2 + 2 of the single-overlap items each
        rows = s.exec(select(Assignment).where(Assignment.scale == "preference")).all()
        assert sorted(sum(1 for a in rows if a.annotator_id == i) for i in (1, 2)) == [6, 6]
    assert run_json(db_path, "review", "queue", "ann") == []  # rating queues do not list preference items

    queue = run_json(db_path, "prefs", "queue", "ann")
    assert len(queue) == 6 and set(queue[0]) == {"item", "task_id", "status"}
    listing = run(db_path, "prefs", "queue", "ann").output
    # blind: an item shows the task and answers A and B, never a run, endpoint or model name
    seen_left = set()
    for item in queue:
        view = run_json(db_path, "prefs", "show", str(item["item"]), "--as-annotator", "ann")
        text = json.dumps(view) + run(db_path, "prefs", "show", str(item["item"]), "--as-annotator", "ann").output
        assert set(view["answers"]) == {"A", "B"} and "question" in view["task"]["query"]
        for secret in ("model-a", "model-b", "model-c", "third run", "strict", "lenient"):
            assert secret not in text and secret not in listing
        assert "(says [model])" in view["answers"]["A"]["final_answer"]
        seen_left.add(view["answers"]["A"]["final_answer"].split(" ")[0])
    assert len(seen_left) >= 2  # the sides are drawn per item, not always the same run first

    # everyone prefers the better answer, except bob once on the r0/r1 pair; one tie each
    items = {who: run_json(db_path, "prefs", "queue", who) for who in ("ann", "bob")}
    for who, mine in items.items():
        for n, item in enumerate(mine):
            view = run_json(db_path, "prefs", "show", str(item["item"]), "--as-annotator", who)
            choice = better_side(view)
            if n == 3 and view["task"]["id"] == world.tasks[3]:
                choice = "tie"
            if (
                who == "bob"
                and view["task"]["id"] == world.tasks[2]
                and "seven" in json.dumps(view)
                and "forty-two" in json.dumps(view)
            ):
                choice = "b" if choice == "a" else "a"
            run(db_path, "prefs", "add", str(item["item"]), choice, "--as-annotator", who, "--reason", "clearer")
    assert run_json(db_path, "prefs", "queue", "ann") == []
    with session_scope(engine) as s:
        prefs = s.exec(select(Preference).order_by(col(Preference.id))).all()
        assert len(prefs) == 12
        for p in prefs:
            assert p.run_a_id < p.run_b_id and p.shown_left_run_id in (p.run_a_id, p.run_b_id)
            assert p.reason == "clearer" and p.task_revision == 1
        ann_pair01 = {p.task_id: p.choice for p in prefs if p.annotator_id == 1 and p.run_b_id == r1}
        bob_pair01 = {p.task_id: p.choice for p in prefs if p.annotator_id == 2 and p.run_b_id == r1}
        assert [ann_pair01[t] for t in world.tasks] == ["a", "a", "a", "tie"]
        assert [bob_pair01[t] for t in world.tasks] == ["a", "a", "b", "tie"]
        assert len(s.exec(select(AuditEvent).where(AuditEvent.entity == "preference")).all()) == 12

    board = run_json(db_path, "prefs", "leaderboard")
    assert [m["model"] for m in board["models"]] == ["model-a", "model-b", "model-c"]
    a, b, c = board["models"]
    assert (a["comparisons"], a["wins"], a["ties"], a["losses"]) == (8, 5, 2, 1)
    assert b["comparisons"] == 12 and c["comparisons"] == 4 and c["wins"] == 0
    assert a["win_rate"] == 0.75 and all(m["ci"][0] <= m["score"] <= m["ci"][1] for m in board["models"])
    assert board == run_json(db_path, "prefs", "leaderboard")  # seeded: the same CIs every time
    with session_scope(engine) as s:  # position bias: how often the side shown as A won
        decisive = [p for p in s.exec(select(Preference)).all() if p.choice != "tie"]
        first = sum(1 for p in decisive if (p.run_a_id if p.choice == "a" else p.run_b_id) == p.shown_left_run_id)
    assert board["position"] == {"decisive": 10, "shown_as_a_won": first, "share": round(first / 10, 6)}
    assert run_json(db_path, "prefs", "leaderboard", "--bench", "demo-review")["models"] == board["models"]
    text = run(db_path, "prefs", "leaderboard").output
    assert "model-a" in text and "win rate" in text and "12 judgement(s)" in text
    assert f"shown as A won {first} of 10" in text
    assert "no benchmark" in run(db_path, "prefs", "leaderboard", "--bench", "nope", ok=False).output

    report = run_json(db_path, "prefs", "agreement")
    assert report["scale"] == "preference" and report["raters"] == ["human:ann", "human:bob"]
    assert report["units"] == 8
    pair = report["pairs"][0]
    assert pair["n"] == 4
    assert pair["statistics"]["percent_agreement"]["value"] == 0.75
    # κ by hand: observed 3/4; ann a,a,a,tie and bob a,a,b,tie → chance 3/4·2/4 + 1/4·1/4 = 7/16
    assert abs(pair["statistics"]["cohen_kappa"]["value"] - (12 / 16 - 7 / 16) / (1 - 7 / 16)) < 1e-6
    assert "fleiss_kappa" in report["overall"]
    assert "percent_agreement" in run(db_path, "prefs", "agreement").output


def test_judging_again_replaces_and_withdraw_reopens(db_path: Path, engine: Engine, world: World) -> None:
    for name in ("ann", "bob"):
        run(db_path, "annotators", "add", name)
    run(
        db_path,
        "prefs",
        "assign",
        str(world.runs[0]),
        str(world.runs[1]),
        "--annotators",
        "ann",
        "--tasks",
        str(world.tasks[0]),
    )
    item = run_json(db_path, "prefs", "queue", "ann")[0]["item"]
    assert f"ann judged item {item} a" in run(db_path, "prefs", "add", str(item), "a", "--as-annotator", "ann").output
    second = run_json(db_path, "prefs", "add", str(item), "tie", "--as-annotator", "ann")
    assert second["revision"] == 2
    assert run_json(db_path, "prefs", "show", str(item), "--as-annotator", "ann")["choice"] == "tie"
    refused = run(db_path, "prefs", "add", str(item), "a", "--as-annotator", "bob", ok=False)
    assert refused.exit_code != 0 and "not bob's" in refused.output
    assert run(db_path, "prefs", "add", str(item), "left", "--as-annotator", "ann", ok=False).exit_code != 0
    assert (
        "two different runs"
        in run(
            db_path, "prefs", "assign", str(world.runs[0]), str(world.runs[0]), "--annotators", "ann", ok=False
        ).output
    )
    assert run_json(db_path, "prefs", "withdraw", str(item), "--as-annotator", "ann")["status"] == "open"
    assert [i["status"] for i in run_json(db_path, "prefs", "queue", "ann")] == ["open"]
    with session_scope(engine) as s:
        assert s.exec(select(Preference)).all() == []


def test_a_pair_to_judge_hides_both_answers_judgements(engine: Engine, world: World) -> None:
    """Blind mode everywhere: while a pair is open, verdicts on either run's answer to that task stay hidden."""
    from annotation.review import preferences as prefs
    from annotation.review.annotators import add_annotator
    from annotation.review.blind import blind_scope
    from annotation.review.targets import Target

    with session_scope(engine, "t") as s:
        add_annotator(s, "ann")
        prefs.assign_pairs(s, world.runs[0], world.runs[1], ["ann"], 1, tasks=[world.tasks[0]])
        t0_run0, t0_run1, t1_run0 = world.trajectories[0], world.trajectories[4], world.trajectories[1]
        scope = blind_scope(s, "ann")
        assert scope.active
        assert scope.hides(s, Target("trajectory", t0_run0)) and scope.hides(s, Target("trajectory", t0_run1))
        assert not scope.hides(s, Target("trajectory", t1_run0))
        prefs.record(s, "ann", prefs.queue(s, "ann")[0].assignment_id, "tie")
        assert not blind_scope(s, "ann").active
