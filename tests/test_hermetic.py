"""The suite is hermetic: each test process has private temp, home and cache folders, and a session
that leaves a process or a listening socket behind fails (and the leftover is stopped)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import hermetic

ROOT = Path(__file__).resolve().parent.parent
SESSION_ROOT = Path(os.environ[hermetic.ROOT_VAR])


def test_temp_home_and_caches_are_private_folders_of_this_session() -> None:
    private = [Path(tempfile.gettempdir()), Path(os.environ["TMPDIR"]), Path.home()]
    private += [Path(os.environ[name]) for name in hermetic.XDG_FOLDERS]
    assert all(path.is_relative_to(SESSION_ROOT) for path in private), private
    assert SESSION_ROOT.name.startswith("chainmark-tests-")
    assert not any(name in os.environ for name in ("CHAINMARK_DB", "CHAINMARK_BLOBS", "CHAINMARK_USER"))


def test_a_subprocess_gets_the_private_temp_folder(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import tempfile, pathlib; print(tempfile.gettempdir(), pathlib.Path.home())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(Path(p).is_relative_to(SESSION_ROOT) for p in out), out
    assert tmp_path.is_relative_to(SESSION_ROOT)


def test_a_subprocess_can_be_interrupted_though_the_suite_runs_in_the_background() -> None:
    """A backgrounded suite inherits SIGINT and SIGQUIT ignored; the processes its tests start must not."""
    status = subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True, check=True).stdout
    ignored = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
    assert ignored & (1 << (signal.SIGINT - 1) | 1 << (signal.SIGQUIT - 1)) == 0, hex(ignored)


LEAKY_TESTS = {
    "process": """
import subprocess, sys
def test_leaves_a_child_running():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
""",
    "daemon": """
import subprocess, sys
def test_leaves_a_daemon_running():
    # the grandchild outlives its parent, as a server started by pg_ctl does
    subprocess.run([sys.executable, "-c", "import subprocess, sys; "
                    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)"],
                   check=True)
""",
    "socket": """
import socket
KEEP = []
def test_leaves_a_server_socket_open():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    KEEP.append(s)
""",
}


def _run_session(folder: Path, test_source: str) -> subprocess.CompletedProcess[str]:
    """A pytest session of one test file under this suite's conftest, as a fresh top-level session."""
    (folder / "test_leaky.py").write_text(test_source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != hermetic.ROOT_VAR and not k.startswith("PYTEST_XDIST")}
    env["CHAINMARK_TEST_LEFTOVER_WAIT_S"] = "1"  # the leftovers here never end by themselves
    # Only this suite's conftest is under test: loading every installed plugin (hypothesis alone takes
    # about 3 s to import) made each of these sessions cost about 5 s of CPU instead of 2.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest"]
    argv += ["-p", "no:xdist", "--rootdir", str(folder), "-c", os.devnull, str(folder / "test_leaky.py")]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("leak", sorted(LEAKY_TESTS))
def test_a_session_that_leaves_something_running_fails_and_stops_it(tmp_path: Path, leak: str) -> None:
    done = _run_session(tmp_path, LEAKY_TESTS[leak])
    assert "1 passed" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "left running by the test session" in done.stdout
    if leak == "socket":
        assert "tcp port" in done.stdout
    else:
        assert "time.sleep(600)" in done.stdout
        pid = int(done.stdout.split("process ", 1)[1].split(":", 1)[0])
        assert hermetic.wait_for_pid_to_end(pid, timeout_s=10.0), f"leftover {pid} still runs"


def _session_folders() -> set[Path]:
    return {p for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith("chainmark-tests-")}


def test_a_clean_session_passes_and_removes_its_folders(tmp_path: Path) -> None:
    before = _session_folders()
    done = _run_session(tmp_path, "def test_nothing():\n    pass\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "left running" not in done.stdout
    assert _session_folders() == before
