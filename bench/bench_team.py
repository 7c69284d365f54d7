"""A team on one PostgreSQL database: N annotator processes rating and editing at once.

Each process is one person. In a loop it rates the trajectories assigned to it, edits its own task,
and edits a few tasks the whole team shares, the way the task editor saves: the edit names the value
it started from and is refused (``FieldConflict``) when someone else changed the field meanwhile;
the person then reads the task again and retries. Afterwards the database is checked:

- every rating a process was told was stored is there, once;
- every edit a process was told was saved is in the audit trail, under its name;
- no lost update: for every task and field, each audited change starts from the value the previous
  change left (an edit made on a stale read would break that chain);
- the final value of each own task is the last value its owner saved.

Prints operations, conflicts, errors, lost writes and the latency of each save transaction (p50/p95;
a conflict's refused save counts as one). Run:
``python bench/bench_team.py [--people 20] [--seconds 60] [--url postgresql+psycopg://…]``
(without ``--url`` a throwaway cluster is started, as the store tests do).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

SHARED_TASKS = 4
TARGETS_PER_PERSON = 30


@dataclass
class Outcome:
    person: str
    ratings: list[int] = field(default_factory=list)  # HumanRating ids the database acknowledged
    saves: int = 0  # task edits acknowledged
    last_own: str | None = None  # the last value saved in the person's own task
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


def prepare(url: str, people: int) -> dict[str, Any]:
    """Benchmark, people, tasks (one each and a few shared), a run whose trajectories they rate."""
    from annotation import tasks as authoring
    from annotation.review.annotators import add_annotator
    from annotation.review.scales import ensure_builtin_scales
    from store import make_engine, session_scope
    from store.migrate import upgrade
    from store.models import Run, Trajectory

    engine = make_engine(url)
    upgrade(engine)
    with session_scope(engine, "setup") as s:
        ensure_builtin_scales(s)  # once, before the team starts
        authoring.ensure_benchmark(s, "team", "chainmark")
        shared = [int(authoring.create_task(s, "team", f"Shared question {i}?").id or 0) for i in range(SHARED_TASKS)]
        own = {}
        for n in range(people):
            name = f"ann{n:02d}"
            add_annotator(s, name)
            own[name] = int(authoring.create_task(s, "team", f"{name}'s question?").id or 0)
        bench_id = authoring.get_benchmark(s, "team").id
        run = Run(benchmark_id=bench_id or 0, mode="atomic", status="done")
        s.add(run)
        s.flush()
        trajectories = []
        for k in range(TARGETS_PER_PERSON):
            rated = int(authoring.create_task(s, "team", f"Rated question {k}?").id or 0)
            traj = Trajectory(run_id=run.id or 0, task_id=rated, status="done", final_answer="x")
            s.add(traj)
            s.flush()
            trajectories.append(int(traj.id or 0))
    engine.dispose()
    return {"shared": shared, "own": own, "trajectories": trajectories}


def person(url: str, name: str, world: dict[str, Any], seconds: float, seed: int, out: Any, min_ops: int = 0) -> None:
    """One annotator's minute: rate, edit own task, edit shared tasks (retrying on conflicts); at least
    ``min_ops`` actions however slow the machine (the test's counts do not depend on its speed)."""
    from annotation import tasks as authoring
    from annotation.review.ratings import rate
    from annotation.review.targets import Target
    from store import make_engine, session_scope

    rng = random.Random(seed)
    engine = make_engine(url)
    result = Outcome(name)
    to_rate = list(world["trajectories"])
    rng.shuffle(to_rate)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end or n < min_ops:
        n += 1
        roll = rng.random()
        try:
            if roll < 0.5 and to_rate:
                started = time.perf_counter()
                with session_scope(engine, name) as s:
                    row = rate(s, name, "yes-no", Target("trajectory", to_rate.pop()), rng.choice(["yes", "no"]))
                    rating_id = int(row.id or 0)
                result.latencies.append(time.perf_counter() - started)
                result.ratings.append(rating_id)
            elif roll < 0.75 or not to_rate and roll < 0.9:
                value = f"{name} #{n}"
                started = time.perf_counter()
                with session_scope(engine, name) as s:
                    authoring.edit_unless_changed(s, world["own"][name], {"category": value})
                result.latencies.append(time.perf_counter() - started)
                result.saves += 1
                result.last_own = value
            else:
                task_id = rng.choice(world["shared"])
                while True:  # read, think, save against what was read; a conflict means read again
                    with session_scope(engine, name) as s:
                        base = authoring.get_task(s, task_id).query
                    time.sleep(rng.uniform(0, 0.01))
                    started = time.perf_counter()  # each save attempt is one save the person waits for
                    try:
                        with session_scope(engine, name) as s:
                            authoring.edit_unless_changed(
                                s, task_id, {"query": f"{base.split(' |')[0]} | {name} #{n}"}, {"query": base}
                            )
                        result.saves += 1
                        break
                    except authoring.FieldConflict:
                        result.conflicts += 1
                    finally:
                        result.latencies.append(time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - every error is counted and reported
            result.errors.append(f"{type(exc).__name__}: {exc}"[:300])
        time.sleep(rng.uniform(0.0, 0.02))  # a person does not save back to back
    engine.dispose()
    out.put(json.dumps(result.__dict__))


def verify(url: str, world: dict[str, Any], outcomes: list[Outcome]) -> dict[str, Any]:
    """Lost writes of every kind (see the module docstring); 0 everywhere is the goal."""
    from sqlmodel import select

    from store import make_engine, session_scope
    from store.models import AuditEvent, HumanRating, Task

    engine = make_engine(url)
    lost: list[str] = []
    with session_scope(engine) as s:
        stored = set(s.exec(select(HumanRating.id)).all())
        for o in outcomes:
            missing = [r for r in o.ratings if r not in stored]
            lost += [f"{o.person}: rating {r} acknowledged but not stored" for r in missing]
            audited = s.exec(
                select(AuditEvent.id).where(
                    AuditEvent.entity == "task", AuditEvent.action == "update", AuditEvent.actor == o.person
                )
            ).all()
            if len(audited) != o.saves:
                lost.append(f"{o.person}: {o.saves} edits acknowledged, {len(audited)} audited")
            own = s.get(Task, world["own"][o.person])
            if o.last_own is not None and own is not None and own.category != o.last_own:
                lost.append(f"{o.person}: own task says {own.category!r}, last saved {o.last_own!r}")
        for task_id in world["shared"] + list(world["own"].values()):
            events = s.exec(
                select(AuditEvent)
                .where(AuditEvent.entity == "task", AuditEvent.entity_id == task_id)
                .order_by(AuditEvent.id)  # type: ignore[arg-type]
            ).all()  # type: ignore[arg-type]
            for name in ("query", "category"):
                value: Any = None
                for e in events:
                    before, after = e.before or {}, e.after or {}
                    if e.action == "create":
                        value = after.get(name)
                    elif before.get(name) != after.get(name):
                        if before.get(name) != value:
                            lost.append(
                                f"task {task_id} {name}: a change from {before.get(name)!r} followed "
                                f"{value!r} (an update on a stale read)"
                            )
                        value = after.get(name)
        ratings = len(stored)
    engine.dispose()
    return {"lost": lost, "ratings_stored": ratings}


def processes() -> Any:
    """Where the people's processes come from: forked from a server that imported chainmark once
    (a spawned process imports it again, about a second of CPU each); spawned where there is none."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["__main__", "store", "annotation.tasks", "annotation.review.ratings"])
    return ctx


def run(url: str, people: int, seconds: float, min_ops: int = 0) -> dict[str, Any]:
    world = prepare(url, people)
    ctx = processes()
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=person, args=(url, name, world, seconds, i, queue, min_ops))
        for i, name in enumerate(sorted(world["own"]))
    ]
    for p in procs:
        p.start()
    outcomes = [Outcome(**json.loads(queue.get(timeout=seconds + 180))) for _ in procs]
    for p in procs:
        p.join(60)
    latencies = sorted(x for o in outcomes for x in o.latencies)
    checked = verify(url, world, outcomes)
    return {
        "people": people,
        "seconds": seconds,
        "operations": len(latencies),
        "ratings": sum(len(o.ratings) for o in outcomes),
        "edits": sum(o.saves for o in outcomes),
        "conflicts_retried": sum(o.conflicts for o in outcomes),
        "errors": [e for o in outcomes for e in o.errors],
        "lost_writes": checked["lost"],
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 1) if latencies else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--url", help="a PostgreSQL URL (default: a throwaway cluster)")
    args = parser.parse_args()
    cluster = None
    url = args.url
    if url is None:
        from tests.support.postgres import ThrowawayCluster, pg_bindir

        bindir = pg_bindir()
        if bindir is None:
            raise SystemExit("no PostgreSQL server binaries: pass --url or install postgresql")
        cluster = ThrowawayCluster(bindir)
        cluster.start()
        url = cluster.new_database()
    try:
        figures = run(url, args.people, args.seconds)
    finally:
        if cluster is not None:
            cluster.stop()
    print(
        f"{figures['people']} annotators × {figures['seconds']:.0f} s on PostgreSQL: {figures['operations']} saves "
        f"({figures['ratings']} ratings, {figures['edits']} task edits, {figures['conflicts_retried']} conflicts "
        f"retried), {len(figures['errors'])} errors, {len(figures['lost_writes'])} lost writes; "
        f"save latency p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms"
    )
    for line in (figures["errors"] + figures["lost_writes"])[:20]:
        print("  " + line)


if __name__ == "__main__":
    main()
