"""A trajectory without an answer is ``failed`` with its reason, never ``done``: an endpoint that
never answers, one that dribbles its answer (slow-loris), a budget that runs out. ``--retry-failed``
runs them again. Budgets and ``--limit`` are checked before anything runs, with a clear message."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlmodel import select, col

from evaluation.harness import Budgets, RunError, RunSpec, create_run
from store import session_scope
from store.models import Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli


def _statuses(engine, run_id: int) -> list[tuple[str, str | None]]:
    with session_scope(engine) as s:
        return [
            (t.status, t.error)
            for t in s.exec(
                select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.task_id))
            ).all()
        ]


def _add_endpoint(db: Path, base_url: str, replace: bool = False) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db),
            "endpoints",
            "add",
            "ep",
            "--base-url",
            base_url,
            "--model",
            "m",
            *(["--replace"] if replace else []),
        ],
    )
    assert r.exit_code == 0, r.output


@pytest.fixture
def slow_loris() -> Iterator[str]:
    """An HTTP server that accepts, sends a status line, then one header byte now and then, forever."""
    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)

    def serve() -> None:
        clients = []
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                clients.append(conn)
            except TimeoutError:
                pass
            for conn in clients:
                try:
                    conn.sendall(b"X")
                except OSError:
                    pass
        for conn in clients:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    stop.set()
    thread.join()
    server.close()


def test_an_endpoint_that_never_answers_fails_the_trajectory_and_retry_failed_redoes_it(
    engine, db_path: Path, make_bench
) -> None:
    make_bench(n=2)
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>", delay=3600)) as server:
        _add_endpoint(db_path, server.base_url)
        r = CliRunner().invoke(
            cli,
            [
                "--db",
                str(db_path),
                "run",
                "-b",
                "bench",
                "-e",
                "ep",
                "-m",
                "atomic",
                "--max-seconds",
                "0.3",
                "--retries",
                "1",
            ],
        )
    assert r.exit_code == 0, r.output
    run_id = int(r.stdout.splitlines()[0])
    assert _statuses(engine, run_id) == [("failed", "budget exhausted: seconds, no final answer")] * 2
    assert "2 trajectories failed" in r.stderr

    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>")) as server:
        _add_endpoint(db_path, server.base_url, replace=True)
        r = CliRunner().invoke(cli, ["--db", str(db_path), "run", "--resume", str(run_id), "--retry-failed"])
    assert r.exit_code == 0, r.output
    assert _statuses(engine, run_id) == [("done", None)] * 2


def test_a_slow_loris_endpoint_fails_the_trajectory(engine, db_path: Path, make_bench, slow_loris: str) -> None:
    make_bench(n=1)
    _add_endpoint(db_path, slow_loris)
    r = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db_path),
            "run",
            "-b",
            "bench",
            "-e",
            "ep",
            "-m",
            "atomic",
            "--max-seconds",
            "0.5",
            "--retries",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    ((status, error),) = _statuses(engine, int(r.stdout.splitlines()[0]))
    assert status == "failed" and error


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--max-seconds", "nan", "must be a finite number of seconds above 0"),
        ("--max-seconds", "inf", "must be a finite number of seconds above 0"),
        ("--max-seconds", "-1", "must be a finite number of seconds above 0"),
        ("--max-seconds", "0", "must be a finite number of seconds above 0"),
        ("--max-rounds", "0", "must be a whole number from 1 to"),
        ("--max-tokens", "-5", "must be a whole number from 1 to"),
        ("--max-tool-calls", "-1", "must be a whole number from 0 to"),
        ("--limit", "0", "must be a whole number from 1 to"),
        ("--limit", "-5", "must be a whole number from 1 to"),
        ("--limit", "100000000000000000000", "must be a whole number from 1 to"),
        ("--limit", "1e20", "is not a valid integer"),
        ("--retries", "0", "must be a whole number from 1 to"),
    ],
)
def test_budgets_and_limit_are_checked_with_a_clear_message(
    engine, db_path: Path, make_bench, option: str, value: str, message: str
) -> None:
    make_bench(n=2)
    _add_endpoint(db_path, "http://127.0.0.1:9/v1")
    r = CliRunner().invoke(cli, ["--db", str(db_path), "run", "-b", "bench", "-e", "ep", "-m", "atomic", option, value])
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '{option}'" in r.stderr and message in r.stderr and "Traceback" not in r.output
    with session_scope(engine) as s:
        assert s.exec(select(Run)).all() == []  # nothing was created, nothing ran


@pytest.mark.parametrize(
    "spec_change, message",
    [
        ({"limit": 0}, "limit must be a whole number from 1"),
        ({"limit": 10**20}, "limit must be a whole number from 1"),
        ({"budgets": Budgets(max_seconds=float("nan"))}, "max_seconds must be a finite number"),
        ({"budgets": Budgets(max_seconds=-1)}, "max_seconds must be a finite number"),
        ({"budgets": Budgets(max_rounds=0)}, "max_rounds must be a whole number from 1"),
    ],
)
def test_the_harness_refuses_the_same_values_from_any_caller(session, make_bench, spec_change, message) -> None:
    make_bench(n=1)
    from evaluation.harness import add_endpoint

    add_endpoint(session, "ep", "http://127.0.0.1:9/v1", "m")
    spec = RunSpec("bench", "ep", "atomic")
    for key, value in spec_change.items():
        setattr(spec, key, value)
    with pytest.raises(RunError, match=message):
        create_run(session, spec)
