"""A killed import whose dataset is being read ahead in a child process: nothing is committed, and the
child does not stay behind parsing on its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.formats.fixtures import write_isg

# The import, in its own process: batches of two are written while the reader child stalls on a late
# line, so the parent is killed with batches written in its open transaction.
SCRIPT = r"""
import os, sys, time
from pathlib import Path
from annotation.formats import read_ahead, writer
from annotation.formats.api import import_dataset
from store import make_engine
from store.blobs import FolderBlobStore

db, root, marks = sys.argv[1], sys.argv[2], Path(sys.argv[3])
read_ahead.FORK_MIN_BYTES, read_ahead.FRAME_TASKS, writer.BATCH = 0, 2, 2
prepare, insert = writer._Prepare.__call__, writer.insert_audited

def stalling(self, t):
    if t.source_id == "0008":  # in the child
        (marks / "child").write_text(str(os.getpid()))
        while True:
            time.sleep(60)
    prepare(self, t)

def inserting(conn, table, rows, *args, **kw):
    ids = insert(conn, table, rows, *args, **kw)
    if table.name == "task":
        (marks / "written").write_text(str(len(rows)))
    return ids

writer._Prepare.__call__, writer.insert_audited = stalling, inserting
import_dataset(make_engine(Path(db)), FolderBlobStore(Path(db + ".blobs")), "isg", root)
"""


def _wait_for(condition, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status  # dead, not reaped yet (its parent is gone)


def test_killing_the_parent_commits_nothing_and_ends_the_reader(engine, db_path: Path, tmp_path: Path, counts) -> None:
    write_isg(tmp_path / "d", 12)
    marks = tmp_path / "marks"
    marks.mkdir()
    before = counts()
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(db_path), str(tmp_path / "d"), str(marks)])
    child = 0
    try:
        _wait_for(lambda: (marks / "written").exists() and (marks / "child").exists(), "a batch and the stall")
        child = int((marks / "child").read_text())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        _wait_for(lambda: _gone(child), "the reader child to end with its parent")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if child and not _gone(child):  # (the test failed: don't leave it behind)
            os.kill(child, signal.SIGKILL)
    assert counts() == before
