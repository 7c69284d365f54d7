"""The CLI end to end: endpoints, run, runs list/show; kill -9 mid-run then --resume."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from sqlmodel import select, col

from store import session_scope
from store.models import Event, ModelEndpoint, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli
from tests.support.must import must

CHAINMARK = [sys.executable, "-m", "tui.cli"]


def invoke(db: Path, *args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, ["--db", str(db), *args], env=env, catch_exceptions=False)
    return result


def test_endpoints_never_store_the_key(engine, db_path, scripted_openai: ScriptedOpenAI):
    r = invoke(
        db_path,
        "endpoints",
        "add",
        "local",
        "--base-url",
        scripted_openai.base_url,
        "--model",
        "m",
        "--api-key-env",
        "CM_TEST_KEY",
        "--param",
        "temperature=0",
        "--param",
        'stop=["X"]',
    )
    assert r.exit_code == 0, r.output
    r = invoke(db_path, "endpoints", "list", "--json", env={"CM_TEST_KEY": "sk-secret-value"})
    [row] = json.loads(r.output)
    assert (
        row["api_key_env"] == "CM_TEST_KEY"
        and row["key_present"]
        and row["params"] == {"temperature": 0, "stop": ["X"]}
    )
    assert "sk-secret-value" not in r.output
    r = invoke(
        db_path, "endpoints", "add", "bad", "--base-url", "http://x/v1", "--model", "m", "--api-key-env", "sk-abc123"
    )
    assert r.exit_code != 0 and "NAME of an environment variable" in r.output
    with session_scope(engine) as s:
        assert s.exec(select(ModelEndpoint)).one().api_key_env == "CM_TEST_KEY"


def test_run_and_show_with_key_from_env(engine, db_path, make_bench, scripted_openai):
    make_bench("mme", n=3)
    invoke(
        db_path,
        "endpoints",
        "add",
        "local",
        "--base-url",
        scripted_openai.base_url,
        "--model",
        "m",
        "--api-key-env",
        "CM_TEST_KEY",
    )
    r = invoke(db_path, "run", "-b", "mme", "-e", "local", "-m", "atomic")
    assert r.exit_code != 0 and "$CM_TEST_KEY" in r.output  # clear error, nothing run
    scripted_openai.handler = lambda req: text("<answer>red</answer>")
    r = invoke(
        db_path,
        "run",
        "-b",
        "mme",
        "-e",
        "local",
        "-m",
        "atomic",
        "-j",
        "2",
        "--limit",
        "2",
        env={"CM_TEST_KEY": "sk-live-key"},
    )
    assert r.exit_code == 0, r.output
    run_id = int(r.stdout.splitlines()[0])
    assert "done=2" in r.stderr and "tokens=" in r.stderr and "rate=" in r.stderr
    assert {q.headers["authorization"] for q in scripted_openai.chat_requests()} == {"Bearer sk-live-key"}
    listed = json.loads(invoke(db_path, "runs", "list", "--json").output)
    assert [(x["id"], x["done"], x["status"]) for x in listed] == [(run_id, 2, "done")]
    shown = json.loads(invoke(db_path, "runs", "show", str(run_id), "--json").output)
    assert [t["final_answer"] for t in shown["trajectories"]] == ["red", "red"]
    plain = invoke(db_path, "runs", "show", str(run_id)).output
    assert "done 2" in plain and "red" in plain
    with session_scope(engine) as s:
        dump = json.dumps([e.payload for e in s.exec(select(Event)).all()])
        assert "sk-live-key" not in dump


def test_kill_9_mid_run_then_resume_gives_exactly_one_finished_trajectory_per_task(engine, db_path, make_bench):
    tasks = make_bench("mme", n=24)
    rng = random.Random()
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>"), latency=0.08) as server:
        invoke(db_path, "endpoints", "add", "local", "--base-url", server.base_url, "--model", "m")
        env = {**os.environ, "CHAINMARK_DB": str(db_path)}
        proc = subprocess.Popen(
            [*CHAINMARK, "run", "-b", "mme", "-e", "local", "-m", "atomic", "-j", "4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=Path.cwd(),
        )
        run_id = int(must(proc.stdout).readline())  # printed before any work starts
        kill_after = rng.randint(1, 20)
        deadline = time.monotonic() + 60
        while len(server.chat_requests()) < kill_after and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        with session_scope(engine) as s:
            before = {t.task_id: t.status for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id))}
        unfinished = [t for t in tasks if before.get(t) not in ("done", "failed")]
        assert unfinished, f"kill after {kill_after} requests came too late"
        finished_before = {tid for tid, st in before.items() if st == "done"}
        requests_before = len(server.chat_requests())
        done = subprocess.run(
            [*CHAINMARK, "run", "--resume", str(run_id)], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
    with session_scope(engine) as s:
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()
        assert sorted(t.task_id for t in trajs) == sorted(tasks)
        assert {t.status for t in trajs} == {"done"}
        for t in trajs:
            ordinals = [
                e.ordinal for e in s.exec(select(Event).where(Event.trajectory_id == t.id).order_by(col(Event.ordinal)))
            ]
            assert ordinals == list(range(len(ordinals))) and len(ordinals) == 4  # sys, user, reply, answer
    # finished work was not repeated: the resume asked only for the tasks that were not done
    assert len(server.chat_requests()) - requests_before == len(tasks) - len(finished_before)
