"""One line means one line (issue 31 item 8), through the real ``chainmark`` process: an expected
failure prints one line saying what to do and no traceback; a database made by a newer chainmark
says to upgrade chainmark (and ``init`` leaves it alone); listings work on a read-only file (a
read-only mount), a full disk and under a held write lock (tests/cli/test_reads_when_writes_fail.py: every
read-only command, as another user); a base URL's password is never printed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.template_db import copy_sqlite_template

READS = [["tasks", "list"], ["tasks", "show", "1"], ["runs", "list"], ["benchmarks", "list"], ["endpoints", "list"]]


def chainmark(db: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a process of its own, as a user runs it (its stderr is what they see)."""
    return subprocess.run(
        [sys.executable, "-c", "from tui.cli import main; main()", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=db.parent,
        env={**os.environ, "CHAINMARK_BUSY_TIMEOUT_MS": "300", **(env or {})},
    )


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    return lines[0]


def works(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A database at the newest schema with one benchmark, one task and one endpoint, made once per
    module through the real CLI (three processes) and checkpointed into one file's bytes."""
    path = tmp_path_factory.mktemp("seeded") / "c.db"
    copy_sqlite_template(path)
    assert chainmark(path, "benchmarks", "add", "b", "--format", "chainmark").returncode == 0
    assert chainmark(path, "tasks", "add", "-b", "b", "-q", "What is 2+2?").returncode == 0
    r = chainmark(path, "endpoints", "add", "e", "--base-url", "http://bob:hunter2pw@127.0.0.1:9/v1", "--model", "m")
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.read_bytes()


@pytest.fixture
def db(tmp_path: Path, seeded: bytes) -> Path:
    """The seeded database, a private copy per test (0600 in a 0700 folder, as the CLI makes them)."""
    folder = tmp_path / "work"
    folder.mkdir(mode=0o700)
    path = folder / "c.db"
    path.write_bytes(seeded)
    path.chmod(0o600)
    return path


def test_a_database_made_by_a_newer_chainmark_says_to_upgrade_chainmark(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0999_from_the_future'")
    conn.close()
    for args in (["tasks", "list"], ["runs", "list"], ["tasks", "show", "1"], ["init"]):
        line = one_line(chainmark(db, *args))
        assert "made by a newer chainmark (schema 0999_from_the_future" in line
        assert "upgrade chainmark" in line and "run `chainmark init`" not in line
    with sqlite3.connect(db) as conn:  # init took nothing back
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("0999_from_the_future",)]
    conn.close()


def test_listings_work_under_a_held_write_lock_and_a_write_says_so_in_one_line(db: Path) -> None:
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("UPDATE annotator SET role = role")
        for args in READS:
            works(chainmark(db, *args))
        line = one_line(chainmark(db, "annotators", "add", "carol"))
        assert "held the database's write lock" in line and "[traceback in " in line
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_base_url_password_is_never_printed(db: Path) -> None:
    out = works(chainmark(db, "endpoints", "list")) + works(chainmark(db, "endpoints", "list", "--json"))
    assert "hunter2pw" not in out and "bob:[redacted]@127.0.0.1:9/v1" in out
    r = chainmark(db, "endpoints", "add", "f", "--base-url", "https://al:s3cr3tpw@example.invalid/v1", "--model", "m")
    assert "s3cr3tpw" not in r.stdout + r.stderr and "al:[redacted]@example.invalid" in r.stdout


@pytest.fixture
def small_mount(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs of the test's own (root only; skipped where mounting is not permitted), unmounted after."""
    point = tmp_path / "mnt"
    point.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(point)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=True)


def _copy_into(db: Path, folder: Path) -> Path:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    target = folder / "c.db"
    target.write_bytes(db.read_bytes())
    return target


def test_listings_work_on_a_read_only_mount_and_a_write_says_so_in_one_line(db: Path, small_mount: Path) -> None:
    target = _copy_into(db, small_mount)
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    for args in READS:
        works(chainmark(target, *args))
    assert "What is 2+2?" in works(chainmark(target, "tasks", "show", "1"))
    line = one_line(chainmark(target, "annotators", "add", "carol"))
    assert line.startswith("Error: the database is read-only") and "use a writable copy" in line


def test_a_full_disk_is_one_line_for_writes_and_reads_still_work(db: Path, small_mount: Path) -> None:
    """SQLite cannot make the -shm index a WAL reader needs on a full disk: with nothing in the -wal,
    the file is read as it stands, and a write says the disk is full (more: test_reads_when_writes_fail)."""
    target = _copy_into(db, small_mount)
    filler = small_mount / "filler"
    with filler.open("wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    for args in READS:
        works(chainmark(target, *args))
    assert "What is 2+2?" in works(chainmark(target, "tasks", "show", "1"))
    line = one_line(chainmark(target, "annotators", "add", "carol"))
    assert line.startswith("Error: the disk holding the database is full; free some space") and "[traceback in " in line


def test_a_judge_refusing_the_key_is_one_line_saying_which_variable(tmp_path: Path, monkeypatch) -> None:
    """HTTP 401 from a judge endpoint (a real server): the line names the key variable to check, and
    neither the key nor the base URL's password is in it; the traceback is only in the error log."""
    from evaluation.judges.client import JudgeError, complete
    from evaluation.modelcall.endpoint import EndpointSpec
    from tests.support.scripted_openai import ScriptedOpenAI, error
    from tui.errors import message_for

    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-thisisthejudgekey123")
    with ScriptedOpenAI() as server:
        server.push(error(401, "Incorrect API key provided: sk-thisisthejudgekey123"))
        url = server.base_url.replace("http://", "http://judge:pw4judge@")
        spec = EndpointSpec(1, "judge-ep", url, "m", "JUDGE_KEY_FOR_TEST")
        with pytest.raises(JudgeError) as caught:
            complete(spec, [{"role": "user", "content": "hi"}], {})
    line = message_for(caught.value, f"sqlite:///{tmp_path / 'c.db'}")
    assert "\n" not in line and "HTTP 401 from judge-ep" in line
    assert "check the API key the endpoint reads from $JUDGE_KEY_FOR_TEST" in line
    assert "internal error" not in line and "sk-thisisthejudgekey123" not in line and "pw4judge" not in line
    assert "Traceback" in (tmp_path / "chainmark-errors.log").read_text()


def test_a_reference_python_without_a_package_is_one_line_saying_what_to_install(tmp_path: Path) -> None:
    import importlib.util

    from evaluation.conformance.runner import ReferenceError_, run_driver

    if importlib.util.find_spec("sentence_transformers") is not None:
        pytest.skip("sentence-transformers is installed here")
    driver = tmp_path / "driver.py"
    driver.write_text("from sentence_transformers import SentenceTransformer\n", encoding="utf-8")
    with pytest.raises(ReferenceError_) as caught:
        run_driver(sys.executable, driver, [])
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert f"`{sys.executable} -m pip install sentence-transformers`" in message
