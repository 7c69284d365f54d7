"""Issue 31 item 8: the read-only commands work on a database this process cannot write (read-only, a
full disk, another process holding the write lock), and
print what they print on a writable copy; a write says why in one line (and names the lock holder).

"Truly": the tests run as root, and root ignores file modes. So the unwritable cases are played by
another local user (uid 65534 through ``setpriv``, skipped with the reason where that is not
possible), by a read-only bind mount (refused even to root), or by a ``?mode=ro`` URL (SQLite opens
the file read-only). Each case first checks that the write command is refused.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.sandbox_escapes import SECOND_UID, second_user_unavailable
from tests.support.scoring_runs import write_run
from tests.support.template_db import copy_sqlite_template

REPORT = "report.html"
READS: list[list[str]] = [
    ["tasks", "list"],
    ["tasks", "show", "1"],
    ["runs", "show", "1"],
    ["runs", "list"],
    ["benchmarks", "list"],
    ["score", "1", "--no-write"],
    ["score", "1", "--json", "--no-write"],
    ["report", "1"],
    ["report", "1", "--format", "html", "-o", REPORT],  # written into the caller's own folder
]
# The default suite runs one command of each kind in every case; --extended runs them all.
DEFAULT_READS = (["tasks", "list"], ["runs", "show", "1"], ["score", "1", "--json", "--no-write"], READS[-1])


@dataclass
class Caller:
    """Who runs chainmark: root, or another user with a home, temp and output folder of its own."""

    home: Path
    uid: int | None = None
    env: dict[str, str] = field(default_factory=dict)

    def run(self, db: str, *args: str) -> subprocess.CompletedProcess[str]:
        prefix = [] if self.uid is None else ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
        home = str(self.home)
        env = {
            **os.environ,
            "HOME": home,
            "TMPDIR": home,
            **{v: f"{home}/{v.lower()}" for v in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")},
            "CHAINMARK_BUSY_TIMEOUT_MS": "300",
            **self.env,
        }
        argv = [*prefix, sys.executable, "-c", "from tui.cli import main; main()", "--db", db, *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=self.home, env=env)


def read_outputs(caller: Caller, db: str, like: dict[str, str]) -> dict[str, str]:
    """What each read-only command of ``like`` prints (the HTML report: the file it wrote), after checking
    it exited 0 and said nothing on stderr but where the report went."""
    out = {}
    for args in (command.split() for command in like):
        r = caller.run(db, *args)
        assert r.returncode == 0, f"{args}: {r.stderr}"
        if "-o" in args:
            assert r.stderr.strip() == f"report written to {REPORT}", r.stderr
            html = (caller.home / REPORT).read_text(encoding="utf-8")
            out[" ".join(args)] = re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,PLOT", html)  # plots carry their time
            (caller.home / REPORT).unlink()
        else:
            assert not r.stderr.strip(), f"{args}: {r.stderr}"
            out[" ".join(args)] = r.stdout
    return out


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    """The one line a failed command printed; its traceback is in the error log the line names, only."""
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    log = re.fullmatch(r".*\[traceback in (.+)\]", lines[0])
    assert log is not None and "Traceback (most recent call last)" in Path(log.group(1)).read_text(), lines[0]
    return lines[0]


def refused_as_read_only(r: subprocess.CompletedProcess[str]) -> str:
    line = one_error_line(r)
    assert line.startswith("Error: the database is read-only") and "use a writable copy" in line
    return line


_OPENED: list[tuple[Path, int]] = []
"""Folders `_reachable` opened, with their modes before: closed again after each test."""


@pytest.fixture(autouse=True)
def _close_opened_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Close again what a test opened to the second user in this worker's temp folder: the tests after
    it share that folder, and the sandbox refuses a work folder that another user can reach. The
    folders above it stay passable (not listable): the other worker's tests may be passing through."""
    yield
    own = tmp_path_factory.getbasetemp()
    while _OPENED:
        folder, mode = _OPENED.pop()
        if folder.is_relative_to(own) and folder.exists():
            folder.chmod(mode)


def _reachable(folder: Path) -> None:
    """Let other users pass through ``folder`` and its ancestors up to the tests' own root (not list
    them) until the test ends: pytest makes its temp folders 0700, and the second user must reach the
    database by its absolute path. Skipped when a folder above the tests' root is closed to it."""
    top = Path(os.environ.get("CHAINMARK_TEST_ROOT") or tempfile.gettempdir())
    for up in [folder, *folder.parents]:
        mode = up.stat().st_mode
        if not mode & 0o001:
            _OPENED.append((up, mode & 0o7777))
            up.chmod((mode & 0o7777) | 0o011)
        if up == top:
            break
    probe = subprocess.run(
        ["setpriv", f"--reuid={SECOND_UID}", f"--regid={SECOND_UID}", "--clear-groups", "test", "-x", str(folder)],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"uid {SECOND_UID} cannot reach {folder} (a folder above the tests' root is closed)")


@pytest.fixture(scope="module")
def scored_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Agentic-MME run of four trajectories, scored by ``chainmark score`` (its checkpoint results
    stored), checkpointed into one file."""
    path = tmp_path_factory.mktemp("scored") / "c.db"
    copy_sqlite_template(path)
    from store import make_engine

    engine = make_engine(path)
    assert write_run(engine, "agentic-mme", 4) == 1
    engine.dispose()
    root = Caller(path.parent)
    r = root.run(str(path), "score", "1")
    assert r.returncode == 0 and "V_tool" in r.stdout, r.stderr
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM checkpointresult").fetchone()[0] > 0
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


@pytest.fixture(scope="module")
def expected(scored_db: Path, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> dict[str, str]:
    """What the read-only commands print on a writable copy of the database."""
    folder = tmp_path_factory.mktemp("writable")
    copy = folder / "c.db"
    shutil.copyfile(scored_db, copy)
    reads = READS if pytestconfig.getoption("--extended") else DEFAULT_READS
    out = read_outputs(Caller(folder), str(copy), {" ".join(args): "" for args in reads})
    assert (
        '"V_tool": 50.0' in out["score 1 --json --no-write"]
        and "gen-model" in out[f"report 1 --format html -o {REPORT}"]
    )
    if "runs list" in out:
        assert "V_tool" in out["score 1 --no-write"] and "gen-agentic-mme" in out["runs list"]
        assert "gen-model (run 1)" in out["report 1"]
    return out


def _copy(scored_db: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "c.db"
    shutil.copyfile(scored_db, target)
    return target


@pytest.fixture
def other_user(tmp_path: Path) -> Caller:
    reason = second_user_unavailable()
    if reason:
        pytest.skip(reason)
    home = tmp_path / "other-home"
    home.mkdir()
    os.chown(home, SECOND_UID, SECOND_UID)
    _reachable(home)
    caller = Caller(home, SECOND_UID)
    probe = caller.run(str(home / "none.db"), "--help")
    if probe.returncode != 0:  # e.g. a checkout inside a private (0700) folder: the user cannot read chainmark
        last = (probe.stderr.strip().splitlines() or ["(no message)"])[-1]
        pytest.skip(f"uid {SECOND_UID} cannot run chainmark from {Path.cwd()}: {last}")
    return caller


@pytest.mark.parametrize("their_folder_writable", [False, True], ids=["folder-read-only", "folder-writable"])
def test_another_users_0444_database_reads_as_on_a_writable_copy(
    scored_db: Path, expected: dict[str, str], other_user: Caller, tmp_path: Path, their_folder_writable: bool
) -> None:
    """The file is root's, mode 0444; its folder is root's 0755 (so SQLite cannot make its -shm file
    there either) or the reader's own."""
    db = _copy(scored_db, tmp_path / "shared")
    db.chmod(0o444)
    db.parent.chmod(0o755)
    if their_folder_writable:
        os.chown(db.parent, SECOND_UID, SECOND_UID)
    _reachable(db.parent)
    before = db.read_bytes()
    refused_as_read_only(other_user.run(str(db), "annotators", "add", "carol"))
    assert read_outputs(other_user, str(db), expected) == expected
    assert db.read_bytes() == before


def test_a_mode_ro_url_reads_as_on_a_writable_copy_and_leaves_nothing_behind(
    scored_db: Path, expected: dict[str, str], tmp_path: Path
) -> None:
    """``sqlite:///file:PATH?mode=ro&uri=true``: read-only even for root. The file named inside the URI
    is the database (before: a folder called ``file:`` was made in the working folder, and the error
    log went there)."""
    db = _copy(scored_db, tmp_path / "ro-url")
    url = f"sqlite:///file:{db}?mode=ro&uri=true"
    caller = Caller(tmp_path / "caller")
    caller.home.mkdir()
    line = refused_as_read_only(caller.run(url, "annotators", "add", "carol"))
    assert line.endswith(f"[traceback in {db.parent / 'chainmark-errors.log'}]")
    assert read_outputs(caller, url, expected) == expected
    assert sorted(p.name for p in caller.home.iterdir() if not p.name.startswith("xdg_")) == []


@pytest.fixture
def read_only_view(scored_db: Path, tmp_path: Path) -> Iterator[Path]:
    """The database's folder seen through a read-only bind mount (refused even to root)."""
    source = _copy(scored_db, tmp_path / "source").parent
    view = tmp_path / "view"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(source), str(view)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here (needs root and mount rights)")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True, capture_output=True)
        yield view / "c.db"
    finally:
        subprocess.run(["umount", "-l", str(view)], check=True)


def test_a_read_only_mount_reads_as_on_a_writable_copy(
    read_only_view: Path, expected: dict[str, str], tmp_path: Path
) -> None:
    caller = Caller(tmp_path / "caller")
    caller.home.mkdir()
    refused_as_read_only(caller.run(str(read_only_view), "annotators", "add", "carol"))
    assert read_outputs(caller, str(read_only_view), expected) == expected


HOLD_THE_WRITE_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE annotator SET role = role")
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
conn.execute("ROLLBACK")
"""


@contextmanager
def holding_the_write_lock(db: Path, *more_args: str) -> Iterator[subprocess.Popen[str]]:
    """A process holding ``db``'s write transaction open (BEGIN IMMEDIATE) until the block ends."""
    (db.parent / "hold.py").write_text(HOLD_THE_WRITE_LOCK, encoding="utf-8")
    holder = subprocess.Popen(
        [sys.executable, "hold.py", db.name, *more_args],
        cwd=db.parent,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


@pytest.fixture
def lock_holder(scored_db: Path, tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A copy of the database and a process holding its write lock."""
    db = _copy(scored_db, tmp_path / "locked")
    with holding_the_write_lock(db) as holder:
        yield db, holder


def test_reads_work_under_a_held_write_lock_and_a_write_names_the_holder(
    lock_holder: tuple[Path, subprocess.Popen[str]], expected: dict[str, str], tmp_path: Path
) -> None:
    """The built-in rating scales are not stored in this database: the HTML report's agreement section
    used to store them first, and so waited out the busy timeout and failed behind any writer."""
    db, holder = lock_holder
    caller = Caller(tmp_path / "caller", env={"CHAINMARK_BUSY_TIMEOUT_MS": "500"})
    caller.home.mkdir()
    assert read_outputs(caller, str(db), expected) == expected
    python = os.path.basename(sys.executable)
    for write in (["annotators", "add", "carol"], ["score", "1"]):
        started = time.monotonic()
        line = one_error_line(caller.run(str(db), *write))
        assert time.monotonic() - started >= 0.5  # it waited out the busy timeout first
        assert line.startswith(f"Error: another process (pid {holder.pid}: {python} hold.py c.db) held the")
        assert "held the database's write lock longer than the busy timeout (0.5 s)" in line
        assert "let it finish, or raise CHAINMARK_BUSY_TIMEOUT_MS" in line
        assert line.endswith(f"[traceback in {db.parent / 'chainmark-errors.log'}]")


def test_the_lock_holder_is_named_as_a_chainmark_when_it_is_one(scored_db: Path, tmp_path: Path) -> None:
    """A ``chainmark`` process holding the lock is named with its command line, passwords masked."""
    from store.lock_holder import write_lock_holder

    db = _copy(scored_db, tmp_path / "named")
    assert write_lock_holder(db) is None  # nobody holds it
    with holding_the_write_lock(db, "chainmark", "--db", "postgresql://u:pw1234@h/d") as holder:
        found = write_lock_holder(db)
    assert found is not None and found.pid == holder.pid
    python = os.path.basename(sys.executable)
    assert found.describe() == (
        f"another chainmark (pid {holder.pid}: {python} hold.py c.db chainmark --db postgresql://u:[redacted]@h/d)"
    )
    assert write_lock_holder(db) is None  # released with the process


@pytest.fixture
def full_disk(scored_db: Path, tmp_path: Path) -> Iterator[Path]:
    """The database on a 2 MB tmpfs of the test's own, filled to the last byte (root only; skipped where
    mounting is not permitted), unmounted after."""
    point = tmp_path / "disk"
    point.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(point)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        db = _copy(scored_db, point)
        _fill(point)
        yield db
    finally:
        subprocess.run(["umount", "-l", str(point)], check=True)


def _fill(disk: Path) -> None:
    with (disk / "filler").open("ab") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    assert os.statvfs(disk).f_bavail == 0


def full_disk_line(r: subprocess.CompletedProcess[str], log_folder: Path) -> str:
    lines = [one_error_line(r)]
    assert lines[0].startswith("Error: the disk holding the database is full; free some space, then run the command")
    log = log_folder / "chainmark-errors.log"  # not beside the database: there is no room there
    assert lines[0].endswith(f"[traceback in {log}]") and "Traceback (most recent call last)" in log.read_text()
    return lines[0]


def test_reads_work_on_a_full_disk_and_a_write_says_the_disk_is_full(
    full_disk: Path, expected: dict[str, str], tmp_path: Path
) -> None:
    """SQLite cannot make the -shm index a WAL connection needs on a full disk, so every command failed
    "disk I/O error"; with nothing in the -wal the file is read as it stands."""
    caller = Caller(tmp_path / "caller")
    caller.home.mkdir()
    assert read_outputs(caller, str(full_disk), expected) == expected
    for write in (["annotators", "add", "carol"], ["score", "1"]):
        full_disk_line(caller.run(str(full_disk), *write), caller.home)
    assert not (full_disk.parent / "chainmark-errors.log").exists()  # no empty log left on the full disk


def test_a_full_disk_whose_wal_holds_changes_is_one_line(full_disk: Path, tmp_path: Path) -> None:
    """Committed changes that live only in the -wal would be missed by reading the file as it stands:
    then the read fails, in one line saying the disk is full."""
    (full_disk.parent / "filler").unlink()
    full_disk.with_name("c.db-wal").write_bytes(b"\1" * 4096)  # stands for changes not yet in the file
    _fill(full_disk.parent)
    caller = Caller(tmp_path / "caller")
    caller.home.mkdir()
    full_disk_line(caller.run(str(full_disk), "tasks", "list"), caller.home)


def test_a_read_only_database_finds_its_blobs_beside_its_file(tmp_path: Path) -> None:
    """A read-only engine's URL names its file, so its images are read from the blobs folder beside it
    (before: its URL was ``sqlite://``, and blobs were looked up in the database's table, where a
    folder-stored image is not: an export or a screen of a read-only database lost its images)."""
    from store import make_engine
    from store.blobs import FolderBlobStore, default_blob_store
    from store.db import sqlite_path

    db = tmp_path / "c.db"
    copy_sqlite_template(db)
    writable = make_engine(db)
    digest = default_blob_store(writable).put(b"an image's bytes")
    writable.dispose()
    read_only = make_engine(f"sqlite:///file:{db}?mode=ro&uri=true")
    try:
        assert sqlite_path(str(read_only.url)) == db
        blobs = default_blob_store(read_only)
        assert isinstance(blobs, FolderBlobStore) and blobs.get(digest) == b"an image's bytes"
    finally:
        read_only.dispose()
