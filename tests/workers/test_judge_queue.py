"""Queued judging (`chainmark judge … --queue`) executed by `chainmark worker` processes on PostgreSQL:
the same lease model as queued runs (SKIP LOCKED claims, expiry, takeover, a fenced write), verdicts
written once, and equal to what a plain `chainmark judge` stores for the same run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlalchemy.engine import Engine
from sqlmodel import select

from annotation import tasks as authoring
from evaluation.judges import queue as jq
from evaluation.judges.runner import judge_run
from evaluation.scoring.runner import score_run
from store import make_engine, session_scope
from store.blobs import FolderBlobStore
from store.migrate import upgrade
from store.models import Judge, JudgeClaim, ModelEndpoint, Trajectory, Verdict
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli

CHAINMARK = [sys.executable, "-m", "tui.cli"]
ROOT = Path(__file__).resolve().parents[2]
ITEMS = JudgeClaim.__table__  # type: ignore[attr-defined]
ITEM = ITEMS.c
JUDGE = "vtc-open-judge"


def invoke(db: str, blobs: Path, *args: str):
    return CliRunner().invoke(cli, ["--db", db, *args], env={"CHAINMARK_BLOBS": str(blobs)}, catch_exceptions=False)


def judge_reply(req):  # type: ignore[no-untyped-def]
    """Yes for a "right" answer, no otherwise; answers of task numbers 1, 5, 9, … get an unreadable
    first reply, so their trajectory takes a second round (asked again at a higher temperature)."""
    prompt = json.dumps(req.messages)
    said = re.search(r"Model's answer: (\w+) (\d+)", prompt)
    assert said, prompt
    if int(said.group(2)) % 4 == 1 and req.json.get("temperature") == 0:
        return text("I am not sure")
    return text("Yes" if said.group(1) == "right" else "No")


def vtc_run(engine: Engine, base_url: str, n: int) -> int:
    """A VTC run of ``n`` open questions whose answers the rules cannot match, so each needs the judge."""
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "vtc-demo", "vtc")
        s.add(ModelEndpoint(name="j", base_url=base_url, model="judge-model"))
        for i in range(n):
            task = authoring.create_task(
                s, "vtc-demo", f"What is written on sign {i}?", answer_spec={"kind": "exact", "value": "forty-two"}
            )
            stored_trajectory(s, run, int(task.id or 0), [answer(f"{'right' if i % 2 == 0 else 'wrong'} {i}")])
        return run.id or 0


def verdicts(engine: Engine) -> list[tuple[str, str, str | None, float | None, str | None, str | None]]:
    """Every verdict as (task query, part, label, score, raw output, prompt hash), by task and round."""
    from store.models import Task

    tasks, trajs, vs = (m.__table__ for m in (Task, Trajectory, Verdict))  # type: ignore[union-attr]
    task, traj, v = tasks.c, trajs.c, vs.c
    with session_scope(engine) as s:
        rows = s.execute(
            sa.select(task.query, v.target_part, v.label, v.score, v.raw_output, v.prompt_hash)
            .join(trajs, traj.id == v.target_id)
            .join(tasks, task.id == traj.task_id)
            .order_by(task.query, v.id)
        ).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def _held_by(engine: Engine, pid: int) -> int:
    with session_scope(engine) as s:
        return int(
            s.execute(
                sa.select(sa.func.count()).where(ITEM.pid == pid, ITEM.finished_at.is_(None), ITEM.token.is_not(None))
            ).scalar()
            or 0
        )


def _held_ids(engine: Engine, pid: int) -> set[int]:
    with session_scope(engine) as s:
        rows = s.execute(sa.select(ITEM.id).where(ITEM.pid == pid, ITEM.finished_at.is_(None), ITEM.token.is_not(None)))
        return {int(r[0]) for r in rows}


def _finished(engine: Engine, pid: int | None = None) -> int:
    """Items finished (by the worker with this pid)."""
    by = [ITEM.pid == pid] if pid is not None else []
    with session_scope(engine) as s:
        return int(s.execute(sa.select(sa.func.count()).where(ITEM.finished_at.is_not(None), *by)).scalar() or 0)


@pytest.mark.postgres
def test_two_judge_workers_one_killed_every_item_judged_once_as_a_plain_judge_run(
    pg_url, pg_engine, pg_cluster, tmp_path
):
    n = 16
    blobs = FolderBlobStore(tmp_path / "blobs")
    with ScriptedOpenAI(handler=judge_reply, latency=0.3) as server:
        run_id = vtc_run(pg_engine, server.base_url, n)
        env = {**os.environ, "CHAINMARK_DB": pg_url, "CHAINMARK_BLOBS": str(blobs.root)}
        # both workers start before there is work (they wait for it), so both get some of it
        argv = [*CHAINMARK, "worker", "--judges-only", "-j", "2", "--lease-seconds", "1.5"]
        procs = [
            subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT) for _ in "ab"
        ]
        victim, survivor = procs
        try:
            for p in procs:
                assert b"judge items only" in (p.stderr.readline() if p.stderr else b"")  # up and waiting
            r = invoke(pg_url, blobs.root, "judge", str(run_id), "--judge", JUDGE, "--endpoint", "j", "--queue")
            assert r.exit_code == 0, r.output
            assert f"16 trajectories of run {run_id} queued for judging" in r.output
            deadline = time.monotonic() + 30
            while not (_held_by(pg_engine, victim.pid) and _finished(pg_engine, victim.pid) >= 1):
                assert victim.poll() is None and time.monotonic() < deadline, victim.communicate()
                time.sleep(0.02)
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(10)
            # what the dead worker held is frozen now (on a busy machine it may have finished its item just
            # before the kill): exactly those items must be taken over by the survivor
            held_at_death = _held_ids(pg_engine, victim.pid)
            while _finished(pg_engine) < n:  # the survivor takes the dead worker's items over
                assert survivor.poll() is None and time.monotonic() < deadline, survivor.communicate()
                time.sleep(0.02)
            survivor.send_signal(signal.SIGINT)
            _, err = survivor.communicate(timeout=30)
            assert survivor.returncode == 130 and b"judging: judged=" in err, err.decode()
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        queued = verdicts(pg_engine)

    # the same inputs judged by a plain `judge_run` in a database of their own (a server without the
    # latency: where the judge is asked is not part of what is asked)
    plain_engine = make_engine(pg_cluster.new_database())
    upgrade(plain_engine)
    try:
        with ScriptedOpenAI(handler=judge_reply) as quick:
            plain_run = vtc_run(plain_engine, quick.base_url, n)
            stats = judge_run(plain_engine, blobs, plain_run, JUDGE, "j")
        assert stats["verdicts"] == n + n // 4 and stats["rounds"] == 2
        plain = verdicts(plain_engine)
        plain_score = score_run(plain_engine, plain_run, write=False)
    finally:
        plain_engine.dispose()

    assert queued == plain  # the same verdicts, each written once (none lost, no duplicates)
    per_task = Counter(q for q, *_ in queued)
    assert len(per_task) == n and sorted(set(per_task.values())) == [1, 2]
    with session_scope(pg_engine) as s:
        items = s.exec(select(JudgeClaim).where(JudgeClaim.run_id == run_id)).all()
        assert len(items) == n and all(i.finished_at is not None and i.error is None for i in items)
        by_id = {i.id: i for i in items}
        assert all(by_id[k].attempts > 1 and by_id[k].pid != victim.pid for k in held_at_death)  # moved on
        taken_over = [i for i in items if i.attempts > 1]
        assert [j.name for j in s.exec(sa.select(Judge)).scalars()] == [f"{JUDGE}@j"]  # type: ignore[call-overload]
    assert score_run(pg_engine, run_id, write=False).metrics == plain_score.metrics

    shown = json.loads(invoke(pg_url, blobs.root, "runs", "show", str(run_id), "--json").output)
    (judging,) = shown["judging"]
    assert (judging["judge"], judging["items"], judging["judged"], judging["open"], judging["failed"]) == (
        JUDGE,
        n,
        n,
        0,
        0,
    )
    assert judging["takeovers"] == len(taken_over) and judging["workers"] >= 2
    text_out = invoke(pg_url, blobs.root, "runs", "show", str(run_id)).output
    assert "queued judging" in text_out and f"{JUDGE}@j" in text_out


@pytest.mark.postgres
def test_a_worker_whose_item_was_taken_over_writes_nothing(pg_url, pg_engine, tmp_path):
    blobs = FolderBlobStore(tmp_path / "blobs")
    with ScriptedOpenAI(handler=judge_reply) as server:
        run_id = vtc_run(pg_engine, server.base_url, 3)
        with session_scope(pg_engine, actor="tester") as s:  # a trajectory still running is not queued
            task = authoring.create_task(s, "vtc-demo", "Still running", answer_spec={"kind": "exact", "value": "x"})
            s.add(Trajectory(run_id=run_id, task_id=int(task.id or 0), status="running"))
        with session_scope(pg_engine) as s:
            assert jq.enqueue(s, run_id, JUDGE, "j") == 3 and jq.not_judgeable(s, run_id) == 1
            a = jq.claim(s, "A", 1, 60)
        with session_scope(pg_engine) as s:
            assert jq.claimable(s) == 2 and [i.id for i in jq.claim(s, "B", 5, 60)] != [a[0].id]
            s.execute(
                sa.update(ITEMS)
                .where(ITEM.token == "A")
                .values(expires_at=sa.func.now() - sa.text("interval '1 second'"))
            )
        with session_scope(pg_engine) as s:
            (c,) = jq.claim(s, "C", 5, 60)  # A stalled past its expiry: C takes its item over
        assert (c.id, c.attempt) == (a[0].id, 2)
        lost = jq.judge_item(pg_engine, blobs, "A", a[0])
        assert lost["lost"] and verdicts(pg_engine) == []  # A asked the judge, but wrote nothing
        kept = jq.judge_item(pg_engine, blobs, "C", c)
        assert not kept["lost"] and kept["verdicts"] == 1 and len(verdicts(pg_engine)) == 1
        # giving back: B's items are free again at once, with their attempt counted
        with session_scope(pg_engine) as s:
            assert jq.release(s, "B") == 2 and jq.claimable(s) == 2 and jq.open_items(s) == 2
        # judging the run again re-opens finished items; questions already answered are not asked again
        with session_scope(pg_engine) as s:
            assert jq.enqueue(s, run_id, JUDGE, "j") == 3
        calls = len(server.chat_requests())
        from evaluation.harness.worker import WorkerOptions, work_blocking

        report = work_blocking(
            pg_engine, blobs, WorkerOptions(concurrency=2, until_empty=True, ttl=5, poll=0.05, runs=False)
        )
        assert (report.judging.judged, report.judging.lost, report.judging.failed) == (3, 0, 0)
        assert report.judging.verdicts == 2 + 1  # task 0 was answered already; task 1 takes two rounds, task 2 one
        assert len(server.chat_requests()) == calls + 3
    assert len(verdicts(pg_engine)) == 4
    # queued again, then cancelled from the command line: nothing is left open, nothing more is asked
    with session_scope(pg_engine) as s:
        assert jq.enqueue(s, run_id, JUDGE, "j") == 3
        assert jq.claim(s, "D", 1, 60)  # one item is being judged by a live worker
    r = invoke(pg_url, blobs.root, "judge", str(run_id), "--judge", JUDGE, "--endpoint", "j", "--cancel")
    assert r.exit_code == 0 and "2 queued item(s) cancelled, 1 being judged now will finish" in r.output, r.output
    with session_scope(pg_engine) as s:
        (p,) = jq.progress(s, run_id)
        assert (p.items, p.cancelled, p.running, p.open, p.failed) == (3, 2, 1, 1, 0)
        assert jq.claimable(s) == 0


@pytest.mark.postgres
def test_two_workers_recording_the_same_judge_reply_both_keep_their_verdicts(pg_engine):
    """Two runs with the same answer ask the judge the same question; when two workers record the
    reply at once, the second finds the key taken and its transaction (its verdicts) still commits."""
    from evaluation.judges.runner import _keep_reply
    from store.models import ReplayCache

    for content in ("Yes", "No"):
        with session_scope(pg_engine) as s:
            _keep_reply(s, "k" * 64, {"prompt_hash": "h"}, {"content": content})
    with session_scope(pg_engine) as s:
        rows = s.exec(select(ReplayCache)).all()
    assert [(r.kind, r.response) for r in rows] == [("judge", {"content": "Yes"})]  # the first wins


def test_sqlite_refuses_judge_queue_naming_postgresql(tmp_path: Path):
    for flag in ("--queue", "--cancel"):
        r = invoke(str(tmp_path / "c.db"), tmp_path / "blobs", "judge", "1", "--judge", JUDGE, "--endpoint", "j", flag)
        assert r.exit_code == 1, r.output
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "PostgreSQL" in lines[0], r.output
