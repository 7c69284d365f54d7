"""Another process holding SQLite's write lock past the busy timeout stops a run as ``failed`` with
the reason and exit status 1 (not a traceback, not ``done``); what finished before is kept."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlmodel import select, col

from store import session_scope
from store.models import Run, Trajectory
from tests.support.scripted_openai import Request, ScriptedOpenAI, text
from tui.cli import cli
from tests.support.must import must

ANSWER = "<answer>red</answer>"


def _done_count(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM trajectory WHERE status = 'done'").fetchone()[0]
    finally:
        conn.close()


def test_a_write_lock_held_past_the_busy_timeout_fails_the_run(engine, db_path: Path, make_bench) -> None:
    make_bench(n=10)
    holder: list[sqlite3.Connection] = []

    def handler(req: Request) -> Any:
        if len(server.chat_requests()) == 3 and not holder:
            deadline = time.monotonic() + 30
            while _done_count(db_path) < 2:  # the first two are committed, then another writer takes the lock
                assert time.monotonic() < deadline
                time.sleep(0.02)
            conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
            conn.execute("BEGIN IMMEDIATE")
            holder.append(conn)
        return text(ANSWER, delay=0.3 if holder else 0.0)

    env = {"CHAINMARK_BUSY_TIMEOUT_MS": "300"}
    try:
        with ScriptedOpenAI(handler=handler) as server:
            runner = CliRunner()
            assert (
                runner.invoke(
                    cli,
                    [
                        "--db",
                        str(db_path),
                        "endpoints",
                        "add",
                        "scripted",
                        "--base-url",
                        server.base_url,
                        "--model",
                        "scripted-model",
                    ],
                ).exit_code
                == 0
            )
            r = runner.invoke(
                cli, ["--db", str(db_path), "run", "-b", "bench", "-e", "scripted", "-m", "atomic", "-j", "1"], env=env
            )
            calls = len(server.chat_requests())
    finally:
        for conn in holder:
            conn.rollback()
            conn.close()
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    run_id = int(r.stdout.splitlines()[0])
    assert f"run {run_id} failed: the database refused a write (database is locked)" in r.stderr
    assert calls < 10  # stopped before the end: no more calls whose results cannot be kept
    with session_scope(engine) as s:
        statuses = [
            t.status
            for t in s.exec(
                select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.task_id))
            ).all()
        ]
        assert statuses[:2] == ["done", "done"] and "done" not in statuses[2:]
        assert must(s.get(Run, run_id)).status != "done"


def test_the_busy_timeout_setting_is_checked(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "x.db"), "runs", "list"], env={"CHAINMARK_BUSY_TIMEOUT_MS": "soon"}
    )
    assert (
        r.exit_code == 1
        and "CHAINMARK_BUSY_TIMEOUT_MS (setting busy_timeout_ms): input should be a valid integer" in r.stderr
    )
