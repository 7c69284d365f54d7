"""A database that stops taking writes (disk full, read-only, a lock held past the busy timeout) stops
the run: status ``failed`` with the reason, exit status 1, one clear line and no traceback; what was
finished before is kept, nothing more is paid for, and a resume finishes the run once writes work."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlmodel import select, col

from store import session_scope
from store.models import Event, Run, Trajectory
from tests.support.scripted_openai import Request, ScriptedOpenAI, text
from tui.cli import cli
from tests.support.must import must

ANSWER = "<answer>red</answer>"


def _mount_tmpfs(where: Path, size: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs: small enough to fill in a test, ours alone."""
    disk = tmp_path / "disk"
    _mount_tmpfs(disk, "16m")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.fixture
def db_path(small_disk: Path) -> Path:  # every fixture built on db_path (engine, blobs, make_bench) lives on it
    return small_disk / "chainmark.db"


def _fill(folder: Path) -> Path:
    """Write zeros until the device is full; returns the filler file (delete it to free the space)."""
    filler = folder / "filler"
    with open(filler, "wb") as f:
        block = b"\0" * 65536
        try:
            while True:
                f.write(block)
                f.flush()
        except OSError:
            pass
    return filler


def _done_count(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM trajectory WHERE status = 'done'").fetchone()[0]
    finally:
        conn.close()


def _wait_for(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.02)


def _trajectories(engine: Any, run_id: int) -> list[Trajectory]:
    with session_scope(engine) as s:
        return list(
            s.exec(select(Trajectory).where(Trajectory.run_id == run_id).order_by(col(Trajectory.task_id))).all()
        )


def test_disk_full_mid_run_fails_the_run_keeps_what_finished_and_stops_calling(
    engine, db_path: Path, small_disk: Path, make_bench
) -> None:
    make_bench(n=12)
    saved_before_full = 3
    filler: list[Path] = []

    def handler(req: Request) -> Any:
        if len(server.chat_requests()) == saved_before_full + 1 and not filler:
            _wait_for(lambda: _done_count(db_path) == saved_before_full)  # the first three are committed
            filler.append(_fill(small_disk))
        return text(ANSWER + " " + "x" * 20_000, delay=0.2 if filler else 0.0)

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
            cli, ["--db", str(db_path), "run", "-b", "bench", "-e", "scripted", "-m", "atomic", "-j", "1"]
        )
        calls = len(server.chat_requests())
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and isinstance(r.exception, SystemExit)
    run_id = int(r.stdout.splitlines()[0])
    assert f"run {run_id} failed: the database refused a write" in r.stderr
    assert "full" in r.stderr and f"chainmark run --resume {run_id}" in r.stderr
    assert calls < 12  # stopped: no more model calls whose results cannot be kept

    filler[0].unlink()
    trajectories = _trajectories(engine, run_id)
    done = [t for t in trajectories if t.status == "done"]
    assert len(done) == saved_before_full  # nothing finished is lost …
    with session_scope(engine) as s:
        assert all(s.exec(select(Event).where(Event.trajectory_id == t.id)).all() for t in done)
        run = s.get(Run, run_id)  # … and nothing unfinished is called done: the disk reserve let this be written
        assert (
            must(run).status == "failed"
            and must(run).config["stopped_because"] == "the database refused a write (database or disk is full)"
        )
    assert "could not be recorded" not in r.stderr
    shown = CliRunner().invoke(cli, ["--db", str(db_path), "runs", "show", str(run_id)]).stdout
    assert (
        "[atomic, failed]" in shown
        and "stopped because the database refused a write (database or disk is full)" in shown
    )
    assert not list(small_disk.glob("*.reserve-*"))  # the reserve is given back

    with ScriptedOpenAI(handler=lambda req: text(ANSWER)) as server:  # space again: a resume finishes it
        assert (
            CliRunner()
            .invoke(
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
                    "--replace",
                ],
            )
            .exit_code
            == 0
        )
        r = CliRunner().invoke(cli, ["--db", str(db_path), "run", "--resume", str(run_id)])
    assert r.exit_code == 0, r.output
    assert [t.status for t in _trajectories(engine, run_id)] == ["done"] * 12


def test_a_read_only_database_is_one_clear_line_and_no_model_call(
    engine, db_path: Path, small_disk: Path, make_bench
) -> None:
    make_bench(n=2)
    with ScriptedOpenAI(handler=lambda req: text(ANSWER)) as server:
        assert (
            CliRunner()
            .invoke(
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
            )
            .exit_code
            == 0
        )
        engine.dispose()
        view = small_disk.parent / "read-only-view"  # the same files through a read-only bind mount
        view.mkdir()
        subprocess.run(["mount", "--bind", str(small_disk), str(view)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True)
            r = CliRunner().invoke(
                cli, ["--db", str(view / db_path.name), "run", "-b", "bench", "-e", "scripted", "-m", "atomic"]
            )
        finally:
            subprocess.run(["umount", "-l", str(view)], check=False)
        calls = len(server.chat_requests())
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "read-only" in lines[0], r.stderr
    assert "traceback in" in lines[0] and calls == 0
