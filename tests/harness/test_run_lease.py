"""One executor per run: real processes race for a run's lease, the loser refuses and names the
holder, every model call is paid once; a kill -9'd run shows "interrupted" and its lease is taken over
on resume; an expired lease of another host is stale, a live one is respected."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlmodel import select

from evaluation.harness import RetryPolicy, RunSpec, create_run
from evaluation.harness.lease import LeaseHeld, leases, run_lease
from store import session_scope
from store.models import RunLease, Trajectory, utcnow
from tests.support.scripted_openai import ScriptedOpenAI, error, text
from tui.cli import cli

CHAINMARK = [sys.executable, "-m", "tui.cli"]
N_TASKS = 7


def invoke(db: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)


def _wait_for(cond, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _new_run(engine, db_path: Path, server: ScriptedOpenAI, **spec) -> int:  # type: ignore[no-untyped-def]
    invoke(db_path, "endpoints", "add", "local", "--base-url", server.base_url, "--model", "m")
    with session_scope(engine, "tester") as s:
        return create_run(s, RunSpec("mme", "local", "atomic", concurrency=1, **spec)).id or 0


def test_two_processes_resuming_one_run_execute_it_once(engine, db_path, make_bench) -> None:  # type: ignore[no-untyped-def]
    """Both start at once; the model answers "busy, retry in 50 ms" until one of them has given up,
    so they surely overlap; then every task is answered once."""
    make_bench("mme", n=N_TASKS)
    gate = threading.Event()
    answered: list[int] = []

    def handler(req):  # type: ignore[no-untyped-def]
        if not gate.is_set():
            return error(503, "busy", retry_after=0.05)
        answered.append(1)
        return text("<answer>red</answer>")

    with ScriptedOpenAI(handler=handler) as server:
        run_id = _new_run(engine, db_path, server, retry=RetryPolicy(attempts=100000, base_delay=0.05, max_delay=0.1))
        env = {**os.environ, "CHAINMARK_DB": str(db_path)}
        procs = [
            subprocess.Popen(
                [*CHAINMARK, "run", "--resume", str(run_id)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(2)
        ]
        _wait_for(lambda: any(p.poll() is not None for p in procs), "one executor to give up", timeout=120)
        gate.set()
        outs = [p.communicate(timeout=120) for p in procs]
        codes = sorted(p.returncode for p in procs)
        assert codes[0] == 0 and codes[1] != 0, outs
        loser = next(o for p, o in zip(procs, outs) if p.returncode != 0)
        winner = next(p for p in procs if p.returncode == 0)
        assert f"run {run_id} is already being executed by pid {winner.pid}" in loser[1]
        assert len(answered) == N_TASKS  # one answered call per task: nothing was paid twice
    with session_scope(engine) as s:
        assert {t.status for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id))} == {"done"}
        assert s.get(RunLease, run_id) is None  # given back at the end


def test_second_executor_refuses_while_the_first_runs_then_kill_9_shows_interrupted_and_resume_takes_over(
    engine, db_path, make_bench
) -> None:  # type: ignore[no-untyped-def]
    make_bench("mme", n=N_TASKS)
    # the first executor's first call hangs (long latency) so it is surely still executing when the
    # second starts; it is killed before the reply would come
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>"), latency=60) as server:
        run_id = _new_run(engine, db_path, server)
        env = {**os.environ, "CHAINMARK_DB": str(db_path)}
        first = subprocess.Popen(
            [*CHAINMARK, "run", "--resume", str(run_id)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        _wait_for(lambda: len(server.chat_requests()) >= 1, "the first executor's first call")
        second = subprocess.run(
            [*CHAINMARK, "run", "--resume", str(run_id)], capture_output=True, text=True, env=env, timeout=60
        )
        assert second.returncode != 0 and f"already being executed by pid {first.pid}" in second.stderr
        listed = json.loads(invoke(db_path, "runs", "list", "--json").output)
        assert [r["status"] for r in listed] == ["running"]

        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        server.latency = 0
        listed = json.loads(invoke(db_path, "runs", "list", "--json").output)
        assert [(r["status"], r["resume"]) for r in listed] == [("interrupted", f"chainmark run --resume {run_id}")]
        shown = invoke(db_path, "runs", "show", str(run_id)).output
        assert "interrupted" in shown and f"chainmark run --resume {run_id}" in shown

        done = subprocess.run(
            [*CHAINMARK, "run", "--resume", str(run_id)], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
    with session_scope(engine) as s:
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()
        assert len(trajs) == N_TASKS and {t.status for t in trajs} == {"done"}
    assert [r["status"] for r in json.loads(invoke(db_path, "runs", "list", "--json").output)] == ["done"]


def test_lease_of_another_host_is_respected_until_it_expires(engine, db_path, make_bench) -> None:  # type: ignore[no-untyped-def]
    make_bench("mme", n=1)
    with ScriptedOpenAI(handler=lambda req: text("x")) as server:
        run_id = _new_run(engine, db_path, server)
    now = utcnow()
    with session_scope(engine) as s:
        s.add(
            RunLease(
                run_id=run_id,
                token="elsewhere",
                host="other-host.example",
                pid=4242,
                acquired_at=now,
                heartbeat_at=now,
                expires_at=now + timedelta(seconds=300),
            )
        )
    with pytest.raises(LeaseHeld, match="pid 4242 on other-host.example"):
        with run_lease(engine, run_id):
            pass
    with session_scope(engine) as s:
        row = s.get(RunLease, run_id)
        assert row is not None
        row.expires_at = now - timedelta(seconds=1)  # its heartbeat stopped: stale
    with session_scope(engine) as s:
        assert leases(s)[run_id].stale
    with run_lease(engine, run_id) as info:
        assert info is not None and info.pid == os.getpid() and not info.stale
    with session_scope(engine) as s:
        assert s.get(RunLease, run_id) is None
