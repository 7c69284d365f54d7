"""The run lease is taken atomically on both databases: of several executors racing for one run,
exactly one wins and the others are told who holds it (SQLite: BEGIN IMMEDIATE; PostgreSQL: the run
row locked FOR UPDATE)."""

from __future__ import annotations

import threading

from sqlalchemy.engine import Engine

from evaluation.harness.lease import LeaseHeld, run_lease
from store import session_scope
from store.models import Benchmark, Run, RunLease

RACERS = 6


def test_one_of_many_racing_executors_gets_the_lease(any_engine: Engine) -> None:
    with session_scope(any_engine, "tester") as s:
        bench = Benchmark(name="b", source_format="chainmark")
        s.add(bench)
        s.flush()
        run = Run(benchmark_id=bench.id or 0, mode="atomic")
        s.add(run)
        s.flush()
        run_id = run.id or 0
    start = threading.Barrier(RACERS)
    tried = threading.Semaphore(0)
    won: list[int] = []
    refused: list[str] = []

    def racer(n: int) -> None:
        start.wait()
        try:
            with run_lease(any_engine, run_id):
                won.append(n)
                for _ in range(RACERS - 1):  # hold the lease until every other racer has tried
                    tried.acquire(timeout=60)
        except LeaseHeld as exc:
            refused.append(str(exc))
            tried.release()

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(won) == 1 and len(refused) == RACERS - 1
    assert all(f"run {run_id} is already being executed by pid" in r for r in refused)
    with session_scope(any_engine) as s:
        assert s.get(RunLease, run_id) is None  # the winner gave it back
