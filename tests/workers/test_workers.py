"""Queued runs executed by `chainmark worker` processes: claims with SKIP LOCKED, takeover of a dead
worker's claims, the commit fence, cancel and resume across processes, and the refusal on SQLite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlmodel import Session, select

from evaluation.harness import RunSpec, create_run
from evaluation.harness import workqueue as wq
from evaluation.harness.recorder import FinishedTrajectory, Recorder
from evaluation.harness.runner import _task_ids
from evaluation.harness.worker import WorkerOptions, work_blocking
from store import session_scope
from store.models import Event, Run, Trajectory, TrajectoryClaim, utcnow
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.workers.conftest import make_bench
from tui.cli import cli

CHAINMARK = [sys.executable, "-m", "tui.cli"]
CLAIMS = TrajectoryClaim.__table__  # type: ignore[attr-defined]
CLAIM = CLAIMS.c
TRAJECTORIES = Trajectory.__table__  # type: ignore[attr-defined]
TRAJ = Trajectory.__table__.c  # type: ignore[attr-defined]
EVENT = Event.__table__.c  # type: ignore[attr-defined]
ROOT = Path(__file__).resolve().parents[2]


def invoke(db: str, blobs: Path, *args: str):
    return CliRunner().invoke(cli, ["--db", db, *args], env={"CHAINMARK_BLOBS": str(blobs)}, catch_exceptions=False)


def red(req):  # type: ignore[no-untyped-def]
    return text("<answer>red</answer>")


def _events_by_trajectory(s: Session, run_id: int) -> dict[int, Counter[str]]:
    out: dict[int, Counter[str]] = {}
    for tid, kind in s.execute(
        sa.select(EVENT.trajectory_id, EVENT.kind)
        .join(TRAJECTORIES, TRAJ.id == EVENT.trajectory_id)
        .where(TRAJ.run_id == run_id)
    ).all():
        out.setdefault(tid, Counter())[kind] += 1
    return out


def _assert_each_done_once(engine, run_id: int, n: int) -> None:
    with session_scope(engine) as s:
        run = s.get(Run, run_id)
        assert run is not None and run.status == "done" and run.finished_at is not None
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()
        assert len(trajs) == n and {t.status for t in trajs} == {"done"}
        assert [t.final_answer for t in trajs] == ["red"] * n
        events = _events_by_trajectory(s, run_id)
        assert set(events) == {t.id for t in trajs}  # none lost
        first = next(iter(events.values()))
        assert first and all(c == first for c in events.values()), events  # no duplicates anywhere
        claims = s.exec(select(TrajectoryClaim).where(TrajectoryClaim.run_id == run_id)).all()
        assert len(claims) == n and all(c.finished_at is not None for c in claims)


@pytest.mark.postgres
def test_three_worker_processes_one_killed_mid_run_every_trajectory_done_exactly_once(pg_url, pg_engine, pg_blobs):
    n = 24
    with ScriptedOpenAI(handler=red, latency=0.25) as server:
        make_bench(pg_engine, pg_blobs, server.base_url, n)
        r = invoke(pg_url, pg_blobs.root, "run", "-b", "mme", "-e", "local", "-m", "atomic", "--queue")
        assert r.exit_code == 0, r.output
        run_id = int(r.stdout.split()[0])
        assert "queued: 24 trajectories open" in r.stderr
        assert server.chat_requests() == []  # nothing ran here
        env = {**os.environ, "CHAINMARK_DB": pg_url, "CHAINMARK_BLOBS": str(pg_blobs.root)}
        argv = [*CHAINMARK, "worker", "--until-empty", "-j", "2", "--lease-seconds", "2"]
        victim = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        procs = [victim]
        try:
            deadline = time.monotonic() + 60
            while len(procs) < 3 or not _held_by(pg_engine, victim.pid):  # the others start once it works
                if len(procs) < 3 and _held_by(pg_engine, victim.pid):
                    procs += [
                        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
                        for _ in range(2)
                    ]
                assert victim.poll() is None and time.monotonic() < deadline, victim.communicate()
                time.sleep(0.02)
            while True:  # kill the first worker while it holds claims and some work is finished
                with session_scope(pg_engine) as s:
                    finished = int(
                        s.execute(sa.select(sa.func.count()).where(CLAIM.finished_at.is_not(None))).scalar() or 0
                    )
                held = _held_by(pg_engine, victim.pid)
                if held and finished >= 2:
                    break
                assert victim.poll() is None and time.monotonic() < deadline, (
                    f"the first worker never held work: {victim.communicate()}"
                )
                time.sleep(0.02)
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(10)
            for p in procs[1:]:
                out, err = p.communicate(timeout=90)
                assert p.returncode == 0, err.decode()
                assert b"done" in out
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        calls = len(server.chat_requests())
    _assert_each_done_once(pg_engine, run_id, n)
    with session_scope(pg_engine) as s:
        claims = s.exec(select(TrajectoryClaim).where(TrajectoryClaim.run_id == run_id)).all()
    taken_over = [c for c in claims if c.attempts > 1]
    assert taken_over and all(c.pid != victim.pid for c in taken_over)  # the dead worker's claims moved on
    assert n <= calls <= n + len(taken_over)  # only what the dead worker had in flight was asked again
    shown = json.loads(invoke(pg_url, pg_blobs.root, "runs", "show", str(run_id), "--json").output)
    assert shown["status"] == "done" and shown["done"] == n and shown["queued"]
    assert sum(w["done"] for w in shown["workers"]) == n
    assert {w["pid"] for w in shown["workers"]} >= {p.pid for p in procs[1:]}
    assert sum(w["takeovers"] for w in shown["workers"]) == len(taken_over)
    assert sum(w["calls"] for w in shown["workers"]) == n


def _held_by(engine, pid: int) -> int:
    with session_scope(engine) as s:
        return int(
            s.execute(
                sa.select(sa.func.count()).where(
                    CLAIM.pid == pid, CLAIM.finished_at.is_(None), CLAIM.token.is_not(None)
                )
            ).scalar()
            or 0
        )


def _queued_run(engine, blobs, base_url: str, n: int) -> int:
    make_bench(engine, blobs, base_url, n)
    with session_scope(engine, "tester") as s:
        run = create_run(s, RunSpec("mme", "local", "atomic"))
        wq.enqueue(s, run.id or 0, _task_ids(s, run))
        return run.id or 0


@pytest.mark.postgres
def test_skip_locked_claims_expiry_takeover_and_the_commit_fence(pg_engine, pg_blobs):
    with ScriptedOpenAI(handler=red) as server:
        run_id = _queued_run(pg_engine, pg_blobs, server.base_url, 5)
        # two workers claiming at the same moment get disjoint trajectories (SKIP LOCKED)
        with Session(pg_engine) as s1, Session(pg_engine) as s2:
            a = wq.claim(s1, run_id, "A", 2, 60)
            b = wq.claim(s2, run_id, "B", 10, 60)  # s1 has not committed: its rows are skipped, not waited for
            s1.commit()
            s2.commit()
        assert a and b and len(a) == 2 and len(b) == 3 and not {t for t, *_ in a} & {t for t, *_ in b}
        with session_scope(pg_engine) as s:
            assert wq.claim(s, run_id, "C", 10, 60) == []  # all held, none expired
            assert s.get(Run, run_id).status == "running"  # type: ignore[union-attr]
            # A dies: its heartbeat stops and its claims expire
            s.execute(
                sa.update(CLAIMS)
                .where(CLAIM.token == "A")
                .values(expires_at=sa.func.now() - sa.text("interval '1 second'"))
            )
        with session_scope(pg_engine) as s:
            c = wq.claim(s, run_id, "C", 10, 60)
        assert sorted((t, k) for t, k, _ in c or []) == sorted((t, k) for t, k, _ in a)
        assert {n for *_, n in a} == {1} and {n for *_, n in c or []} == {2}
        # C dies too, and A, alive after a long stall, claims everything again (its rows at attempt 3)
        with session_scope(pg_engine) as s:
            s.execute(sa.update(CLAIMS).values(expires_at=sa.func.now() - sa.text("interval '1 second'")))
        with session_scope(pg_engine) as s:
            again = wq.claim(s, run_id, "A", 10, 60)
        assert again and {t: n for t, _, n in again}[a[0][0]] == 3
        # A's first, abandoned execution ends and is committed: the fence (token and attempt) drops it
        fenced = wq.Fenced("A", run_id, {t: n for t, _, n in a})
        rec = Recorder()
        rec.add("answer", {"text": "stale"})
        with session_scope(pg_engine) as s:
            fenced.commit(s, [FinishedTrajectory(a[0][0], rec, "done", "stale", {}, None, [], 1, utcnow())])
            assert fenced.lost == {a[0][0]}
            assert s.get(Trajectory, a[0][0]).status == "running"  # type: ignore[union-attr]
            assert _events_by_trajectory(s, run_id) == {}
            # every worker vanished: all claims expire, one worker finishes the run
            s.execute(sa.update(CLAIMS).values(expires_at=sa.func.now() - sa.text("interval '1 second'")))
        report = work_blocking(pg_engine, pg_blobs, WorkerOptions(concurrency=3, until_empty=True, ttl=5, poll=0.1))
        assert report.done == 5 and report.lost == 0
        assert len(server.chat_requests()) == 5
    _assert_each_done_once(pg_engine, run_id, 5)
    with session_scope(pg_engine) as s:
        attempts = {int(t): int(n) for t, n in s.execute(sa.select(CLAIM.trajectory_id, CLAIM.attempts)).all()}
    assert attempts[a[0][0]] == 4 and attempts[b[0][0]] == 3


@pytest.mark.postgres
def test_cancel_across_processes_then_resume(pg_url, pg_engine, pg_blobs):
    with ScriptedOpenAI(handler=red) as server:
        make_bench(pg_engine, pg_blobs, server.base_url, 4)
        r = invoke(pg_url, pg_blobs.root, "run", "-b", "mme", "-e", "local", "-m", "atomic", "--queue")
        run_id = int(r.stdout.split()[0])
        listed = json.loads(invoke(pg_url, pg_blobs.root, "runs", "list", "--json").output)
        assert [(x["id"], x["status"], x["unfinished"]) for x in listed] == [(run_id, "queued", 4)]
        r = invoke(pg_url, pg_blobs.root, "runs", "cancel", str(run_id))
        assert r.exit_code == 0 and "cancelled" in r.output
        r = invoke(pg_url, pg_blobs.root, "worker", "--until-empty", "--run", str(run_id))
        assert r.exit_code == 0, r.output
        assert server.chat_requests() == []  # a cancelled run is not claimed
        # a plain --resume keeps a queued run queued (it never runs it here, beside the workers)
        r = invoke(pg_url, pg_blobs.root, "run", "--resume", str(run_id))
        assert r.exit_code == 0 and "queued: 4 trajectories open" in r.stderr
        assert server.chat_requests() == []
        r = invoke(pg_url, pg_blobs.root, "worker", "--once", "-j", "2")
        assert r.exit_code == 0 and "done 4" in r.stdout, r.output
        shown = invoke(pg_url, pg_blobs.root, "runs", "show", str(run_id)).output
        assert "done 4" in shown and f"{os.getpid()}" in shown  # the worker table names host and pid
    _assert_each_done_once(pg_engine, run_id, 4)


def test_sqlite_refuses_queue_and_worker_naming_postgresql(tmp_path: Path):
    db = str(tmp_path / "c.db")
    for args in (["run", "-b", "x", "-e", "y", "-m", "atomic", "--queue"], ["worker", "--until-empty"]):
        r = invoke(db, tmp_path / "blobs", *args)
        assert r.exit_code == 1, r.output
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "PostgreSQL" in lines[0], r.output


@pytest.mark.postgres
def test_heartbeats_keep_claims_of_trajectories_longer_than_the_lease(pg_engine, pg_blobs):
    """Calls of 1.2 s under a 0.6 s lease: the heartbeat renews the claims, so the second worker
    never takes over a trajectory that is still running (each is claimed once, called once)."""
    import asyncio

    from evaluation.harness.worker import work

    with ScriptedOpenAI(handler=red, latency=1.2) as server:
        run_id = _queued_run(pg_engine, pg_blobs, server.base_url, 4)
        options = WorkerOptions(concurrency=2, until_empty=True, ttl=0.6, poll=0.05)

        async def two() -> list:
            return list(await asyncio.gather(work(pg_engine, pg_blobs, options), work(pg_engine, pg_blobs, options)))

        reports = asyncio.run(two())
        assert sum(r.done for r in reports) == 4 and sum(r.lost for r in reports) == 0
        assert len(server.chat_requests()) == 4
    _assert_each_done_once(pg_engine, run_id, 4)
    with session_scope(pg_engine) as s:
        assert {int(n) for n in s.execute(sa.select(CLAIM.attempts)).scalars()} == {1}
