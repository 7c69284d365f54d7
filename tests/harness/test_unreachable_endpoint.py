"""An endpoint nobody answers stops the run after the first trajectory's retries, instead of failing
every task one retry schedule at a time; the tasks not started stay pending, and a resume with
``--retry-failed`` finishes the run once the endpoint answers. Once the endpoint has answered in
this session, or when it answers with errors or too slowly, failures stay per task."""

from __future__ import annotations

import socket
from pathlib import Path
from types import SimpleNamespace

from click.testing import CliRunner
from sqlmodel import select, col

from evaluation.harness import RunSpec, add_endpoint, create_run, run_blocking
from evaluation.harness.client import RetryPolicy
from evaluation.harness.runner import _unreachable
from store import session_scope
from store.models import Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli
from tests.support.must import must


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _statuses(engine, run_id: int) -> list[str]:
    with session_scope(engine) as s:
        return [
            t.status
            for t in s.exec(
                select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.task_id))
            ).all()
        ]


def test_a_dead_endpoint_stops_the_run_and_a_resume_finishes_it(engine, blobs, make_bench, db_path: Path) -> None:
    make_bench(n=6)
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "local", f"http://127.0.0.1:{_closed_port()}/v1", "scripted-model")
        run_id = create_run(
            s, RunSpec("bench", "local", "atomic", concurrency=2, retry=RetryPolicy(attempts=2, base_delay=0.01))
        ).id
    summary = run_blocking(engine, blobs, run_id)
    assert summary.halted and "Connection refused" in summary.halted
    assert summary.status == "failed" and summary.done == 0
    statuses = _statuses(engine, run_id)
    assert statuses.count("pending") >= 4 and set(statuses) == {"failed", "pending"}  # only those in flight ran
    with session_scope(engine) as s:
        assert must(s.get(Run, run_id)).status == "failed"

    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>")) as server:
        r = CliRunner().invoke(
            cli,
            [
                "--db",
                str(db_path),
                "endpoints",
                "add",
                "local",
                "--base-url",
                server.base_url,
                "--model",
                "scripted-model",
                "--replace",
            ],
        )
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(cli, ["--db", str(db_path), "run", "--resume", str(run_id), "--retry-failed"])
        assert r.exit_code == 0, r.output
    assert _statuses(engine, run_id) == ["done"] * 6


def test_the_cli_says_why_it_stopped_and_how_to_go_on(engine, make_bench, db_path: Path) -> None:
    make_bench(n=3)
    port = _closed_port()
    runner = CliRunner()
    assert (
        runner.invoke(
            cli,
            [
                "--db",
                str(db_path),
                "endpoints",
                "add",
                "dead",
                "--base-url",
                f"http://127.0.0.1:{port}/v1",
                "--model",
                "m",
            ],
        ).exit_code
        == 0
    )
    r = runner.invoke(
        cli, ["--db", str(db_path), "run", "-b", "bench", "-e", "dead", "-m", "atomic", "-j", "1", "--retries", "1"]
    )
    assert r.exit_code == 1
    run_id = int(r.stdout.splitlines()[0])
    assert "the endpoint cannot be reached" in r.stderr and "Connection refused" in r.stderr
    assert f"chainmark run --resume {run_id} --retry-failed" in r.stderr
    assert _statuses(engine, run_id) == ["failed", "pending", "pending"]


def test_after_the_endpoint_has_answered_a_refused_connection_stops_nothing() -> None:
    refused = SimpleNamespace(failure_kind="connection")
    assert _unreachable(refused, SimpleNamespace(answered=0))  # type: ignore[arg-type]
    assert not _unreachable(refused, SimpleNamespace(answered=1))  # type: ignore[arg-type]
    for kind in ("timeout", "http", "malformed", None):  # the endpoint is there: the run goes on
        assert not _unreachable(SimpleNamespace(failure_kind=kind), SimpleNamespace(answered=0))  # type: ignore[arg-type]
