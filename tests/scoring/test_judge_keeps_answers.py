"""Judging keeps what was paid for: each answered judge call is stored as it arrives.

``chainmark judge`` is killed with SIGKILL after a random number of calls: every call answered before
the kill is in the database, and the rerun asks only the questions nobody answered (counted on the
scripted server). A 401 stops the command in one line and keeps the answers stored before it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from sqlmodel import func, select

from annotation import tasks as authoring
from store import session_scope
from store.models import ModelEndpoint, Verdict
from tests.scoring.builders import answer, call, res, stored_png, stored_run, stored_trajectory
from tests.support.scripted_openai import ScriptedOpenAI, error, text
from tui.cli import cli

CHAINMARK = [sys.executable, "-m", "tui.cli"]
QUESTIONS = 8
KEY_ENV = "CM_TEST_JUDGE_KEY"


def visual_questions(engine, blobs, base_url: str, n: int = QUESTIONS) -> int:  # type: ignore[no-untyped-def]
    """A run whose ``n`` trajectories each put one image question to the amme-visual judge."""
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "amme-demo", "agentic-mme")
        s.add(ModelEndpoint(name="judge-ep", base_url=base_url, model="judge-model", api_key_env=KEY_ENV))
        for i in range(n):
            task = authoring.create_task(
                s,
                "amme-demo",
                f"Read registration {i}",
                source_id=f"q{i}",
                answer_spec={"kind": "contains", "value": "X"},
            )
            authoring.add_checkpoint(
                s,
                task.id or 0,
                "V1",
                axis="V",
                tools=["crop"],
                code_check={"verifier": "verify_crop_ast"},
                visual_check={"question": f"Is registration {i} readable?", "expected_answer": "yes"},
            )
            image = stored_png(s, blobs, (i * 20, 0, 0))
            stored_trajectory(
                s,
                run,
                task.id or 0,
                [
                    call("crop", {"image_index": 0, "bbox_2d": [0, 0, 10, 10]}, "a"),
                    res("crop", "a", asset_ids=[image]),
                    answer("X"),
                ],
            )
        return int(run.id or 0)


def verdicts(engine) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        return int(s.exec(select(func.count()).select_from(Verdict)).one())


def judge_argv(run_id: int) -> list[str]:
    return ["judge", str(run_id), "--judge", "amme-visual", "--endpoint", "judge-ep"]


def test_kill_9_mid_judging_loses_no_answered_call(engine, db_path: Path, blobs) -> None:  # type: ignore[no-untyped-def]
    kill_at = random.Random().randint(2, QUESTIONS - 1)  # the request that is in flight when the kill comes
    with ScriptedOpenAI(handler=lambda req: text("yes"), latency=0.3) as server:
        run_id = visual_questions(engine, blobs, server.base_url)
        env = {**os.environ, "CHAINMARK_DB": str(db_path), KEY_ENV: "k"}
        proc = subprocess.Popen([*CHAINMARK, *judge_argv(run_id)], stdout=subprocess.DEVNULL, env=env, cwd=Path.cwd())
        try:
            deadline = time.monotonic() + 120
            while len(server.chat_requests()) < kill_at and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            assert proc.poll() is None, "the judge run ended before the kill"
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        asked_before = len(server.chat_requests())
        kept = verdicts(engine)
        # The calls are asked one after another: each was answered and stored before the next was sent.
        assert kept >= asked_before - 1 >= kill_at - 1 >= 1
        rerun = subprocess.run([*CHAINMARK, *judge_argv(run_id)], capture_output=True, text=True, env=env, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        asked_again = len(server.chat_requests()) - asked_before
    assert asked_again == QUESTIONS - kept  # nothing answered before the kill was paid for twice
    assert verdicts(engine) == QUESTIONS


def test_a_refused_key_stops_in_one_line_and_keeps_the_answers(engine, db_path: Path, blobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_ENV, "k")
    with ScriptedOpenAI() as server:
        run_id = visual_questions(engine, blobs, server.base_url)
        server.push(*[text("yes")] * 5, error(401, "invalid api key"))
        out = CliRunner().invoke(cli, ["--db", str(db_path), *judge_argv(run_id)])
        assert len(server.chat_requests()) == 6  # not retried: every other call would be refused too
    lines = out.output.strip().splitlines()
    assert out.exit_code == 1 and len(lines) == 1, out.output
    assert lines[0].startswith("Error: the judge endpoint refused the key: 'judge-ep' said HTTP 401"), lines
    assert "5 answer(s) stored before this are kept" in lines[0] and "internal error" not in lines[0]
    assert verdicts(engine) == 5
