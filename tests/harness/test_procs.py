"""`chainmark run --procs N`: trajectories on N child event loops, the parent the only database writer.

The runs are real `chainmark` processes (a harness forks only from a process with one thread; the
pytest process runs the scripted server on a thread of its own), against the scripted server here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from store import session_scope
from store.models import Event, Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls
from tui.cli import cli

CHAINMARK = [sys.executable, "-m", "tui.cli"]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="child harness processes are forked on Linux, at most one per CPU",
)


def _reply(req: Any) -> Any:
    """A crop first, then an answer that depends on the task: every trajectory has its own content."""
    question = next(m for m in req.messages if m.get("role") == "user")["content"][-1]["text"]
    if not any(m.get("role") == "tool" for m in req.messages):
        return tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 50, 40]}))
    return text(f"<answer>{'red' if '(task 1' in question else 'blue'}</answer>")


def _chainmark(db: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CHAINMARK_DB": str(db)}
    return subprocess.run([*CHAINMARK, *args], capture_output=True, text=True, env=env, timeout=120, **kw)


def _start(db: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CHAINMARK_DB": str(db)}
    return subprocess.Popen([*CHAINMARK, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _wait(condition: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def _add_endpoint(db: Path, server: ScriptedOpenAI) -> None:
    from click.testing import CliRunner

    r = CliRunner().invoke(
        cli, ["--db", str(db), "endpoints", "add", "local", "--base-url", server.base_url, "--model", "m"]
    )
    assert r.exit_code == 0, r.output


def _record(engine: Any, run_id: int) -> dict[int, Any]:
    """Per task: the trajectory's outcome and its events, without times, ids and latencies."""
    out = {}
    with session_scope(engine) as s:
        for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)):
            events = sorted(s.exec(select(Event).where(Event.trajectory_id == t.id)).all(), key=lambda e: e.ordinal)
            usage = {k: t.usage.get(k) for k in ("api_calls", "tool_calls", "rounds", "total_tokens")}
            out[t.task_id] = (
                t.status,
                t.final_answer,
                t.error,
                usage,
                [(e.ordinal, e.kind, e.failed, json.dumps(e.payload, sort_keys=True)) for e in events],
            )
    return out


def _exactly_once(engine: Any, run_id: int, tasks: list[int], events_each: int) -> None:
    with session_scope(engine) as s:
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()
        assert sorted(t.task_id for t in trajs) == sorted(tasks)
        assert {t.status for t in trajs} == {"done"}
        for t in trajs:
            ordinals = [e.ordinal for e in s.exec(select(Event).where(Event.trajectory_id == t.id))]
            assert sorted(ordinals) == list(range(events_each)), (t.task_id, ordinals)


def test_two_processes_write_what_one_writes(engine, db_path, make_bench):
    tasks = make_bench("mme", n=12)
    with ScriptedOpenAI(handler=_reply, latency=0.02) as server:
        _add_endpoint(db_path, server)
        summaries = {}
        for procs in (1, 2):
            r = _chainmark(
                db_path, "run", "-b", "mme", "-e", "local", "-m", "atomic", "-j", "6", "--procs", str(procs), "--json"
            )
            assert r.returncode == 0, r.stderr
            summaries[procs] = json.loads(r.stdout)
        calls = len(server.chat_requests())
        r = _chainmark(
            db_path, "run", "-b", "mme", "-e", "local", "-m", "atomic", "-j", "6", "--procs", "2", "--replay", "--json"
        )
        assert r.returncode == 0, r.stderr
        replayed = json.loads(r.stdout)
        assert len(server.chat_requests()) == calls  # every answer came from the cache, through the parent
    one, two = summaries[1], summaries[2]
    assert (one["procs"], two["procs"]) == (1, 2)
    assert (two["done"], two["failed"], two["api_calls"], two["tokens"]) == (12, 0, 24, one["tokens"])
    first, second = _record(engine, one["run_id"]), _record(engine, two["run_id"])
    assert sorted(first) == sorted(second) == sorted(tasks)
    assert first == second
    assert (replayed["procs"], replayed["done"]) == (2, 12)
    again = _record(engine, replayed["run_id"])
    assert {k: v[:4] for k, v in again.items()} == {k: v[:4] for k, v in second.items()}
    assert {v[1] for v in second.values()} == {"red", "blue"}
    with session_scope(engine) as s:
        assert s.get(Run, two["run_id"]).status == "done"  # type: ignore[union-attr]


def _start_on_two_processes(db_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``chainmark run`` of the mme bench on 2 harness processes, started: (process, run id)."""
    proc = _start(db_path, "run", "-b", "mme", "-e", "local", "-m", "atomic", "-j", "4", "--procs", "2")
    assert proc.stdout is not None and proc.stderr is not None
    return proc, int(proc.stdout.readline())


def test_killed_children_lose_and_repeat_nothing(engine, db_path, make_bench):
    """One child killed: its trajectories go to the other and the run finishes. The other killed
    too: the run stops as failed, and a resume finishes it; every task exactly once."""
    tasks = make_bench("mme", n=40)
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>"), latency=0.05) as server:
        _add_endpoint(db_path, server)
        proc, run_id = _start_on_two_processes(db_path)
        children = _wait(lambda: len(server.chat_requests()) >= 4 and _children(proc.pid), "the children's first calls")
        assert len(children) == 2
        os.kill(children[0], signal.SIGKILL)
        seen = len(server.chat_requests())
        _wait(lambda: len(server.chat_requests()) >= seen + 4 or proc.poll() is not None, "calls after the kill")
        assert proc.poll() is None, "the run ended before the second kill"
        os.kill(children[1], signal.SIGKILL)
        assert proc.wait(timeout=60) == 1
        err = proc.stderr.read().decode()  # type: ignore[union-attr]
        assert f"run {run_id} failed" in err and "harness processes" in err, err
        with session_scope(engine) as s:
            assert s.get(Run, run_id).status == "failed"  # type: ignore[union-attr]
            finished = {
                t.task_id
                for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id, Trajectory.status == "done"))
            }
        assert len(finished) < len(tasks)
        before = len(server.chat_requests())
        r = _chainmark(db_path, "run", "--resume", str(run_id), "--procs", "2", "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["procs"] == 2
        assert len(server.chat_requests()) - before == len(tasks) - len(finished)  # finished work not redone
    _exactly_once(engine, run_id, tasks, 4)  # system, user, reply, answer


def test_ctrl_c_cancels_every_process_and_resume_finishes(engine, db_path, make_bench):
    tasks = make_bench("mme", n=40)
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>"), latency=0.05) as server:
        _add_endpoint(db_path, server)
        proc, run_id = _start_on_two_processes(db_path)
        children = _wait(lambda: len(server.chat_requests()) >= 6 and _children(proc.pid), "the children's calls")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        assert "interrupted" in proc.stderr.read().decode()  # type: ignore[union-attr]
        _wait(lambda: not any(Path(f"/proc/{c}").exists() for c in children), "the children to end", 10)
        with session_scope(engine) as s:
            assert s.get(Run, run_id).status == "cancelled"  # type: ignore[union-attr]
            statuses = [t.status for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id))]
        assert statuses.count("done") < len(tasks)
        r = _chainmark(db_path, "run", "--resume", str(run_id), "--procs", "2")
        assert r.returncode == 0, r.stderr
    _exactly_once(engine, run_id, tasks, 4)


def test_monitor_sees_progress_from_every_child(engine, db_path, make_bench):
    """The run monitor (another process reading the database) sees where each trajectory is, though
    the trajectories run in forked children: their reports reach the parent's writer."""
    from tui.screens.runs.data import run_rows

    tasks = make_bench("mme", n=8)
    hold = {"on": True}

    def reply(req: Any) -> Any:
        if not any(m.get("role") == "tool" for m in req.messages):
            return tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 50, 40]}))
        return text("<answer>red</answer>", delay=120 if hold["on"] else 0)  # held until cancelled

    def live() -> list[Any]:
        with session_scope(engine) as s:
            rows = run_rows(s, with_errors_of=run_id)
        return [t for t in rows[0].live if t.calls == 1] if rows and rows[0].id == run_id else []

    with ScriptedOpenAI(handler=reply) as server:
        _add_endpoint(db_path, server)
        proc, run_id = _start_on_two_processes(db_path)
        held = _wait(lambda: len(live()) == 4 and live(), "four trajectories waiting on their second call")
        assert len(_children(proc.pid)) == 2
        assert [t.step for t in held] == ["tool crop"] * 4  # the last report each made: before its tool
        assert {t.task_id for t in held} <= set(tasks)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        hold["on"] = False
    with session_scope(engine) as s:
        statuses = {t.status for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id))}
    assert "running" not in statuses  # a cancelled run leaves no trajectory looking alive
