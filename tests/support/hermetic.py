"""A hermetic test session: private temp, home and cache folders, and a check that nothing it started
is still running when it ends.

Every test process (the one pytest, or each xdist worker) points ``TMPDIR``/``tempfile.tempdir``,
``HOME`` and the ``XDG_*`` folders into a folder of its own inside one session folder, before any test
runs. Subprocesses inherit the environment, so a server, a sandbox or a PostgreSQL cluster started by
a test carries the session folder's path in its environment: at the end of the session a process that
still does is a leftover, and so is a socket this process still listens on. Either fails the session.

Linux only for the leftover check (it reads ``/proc``); elsewhere the folders are still private.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

ROOT_VAR = "CHAINMARK_TEST_ROOT"
"""The session folder, set by the first test process and inherited by xdist workers and subprocesses."""
XDG_FOLDERS = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
SETTINGS_KEPT = frozenset({"CHAINMARK_TEST_WORKERS", "CHAINMARK_FUZZ_EXAMPLES", "CHAINMARK_MONKEY_SEEDS", ROOT_VAR})
"""CHAINMARK_* variables that steer the suite itself rather than the program under test."""
SETTING_PREFIXES_KEPT = ("CHAINMARK_TEST_", "CHAINMARK_LIVE_", "CHAINMARK_REFERENCE_")
_PROC = Path("/proc")


def session_root() -> tuple[Path, bool]:
    """The session folder and whether this process made it (False in an xdist worker: it inherits one)."""
    inherited = os.environ.get(ROOT_VAR)
    if inherited and Path(inherited).is_dir():
        return Path(inherited), False
    root = Path(tempfile.mkdtemp(prefix="chainmark-tests-"))
    os.environ[ROOT_VAR] = str(root)
    return root, True


def _traversable_folder(path: Path) -> Path:
    """A folder other users may pass through but not list: a PostgreSQL cluster run as the postgres
    user (when the tests run as root) lives below it, as it lived below the shared temp folder."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o711)
    return path


def make_private_folders(root: Path, worker: str | None) -> Path:
    """Give this process its own temp, home and XDG folders below ``root``; return its folder."""
    _traversable_folder(root)
    own = _traversable_folder(Path(tempfile.mkdtemp(prefix=f"{worker or 'main'}-", dir=root)))
    temp = _traversable_folder(own / "tmp")
    home = own / "home"
    home.mkdir()
    real_home = Path.home()
    if (real_home / ".pyenv").is_dir():  # pyenv's shims find their versions through $HOME otherwise
        os.environ.setdefault("PYENV_ROOT", str(real_home / ".pyenv"))
    os.environ["TMPDIR"] = str(temp)
    tempfile.tempdir = str(temp)
    os.environ["HOME"] = str(home)
    for name in XDG_FOLDERS:
        os.environ[name] = str(home / name.removeprefix("XDG_").removesuffix("_HOME").lower())
    os.environ.pop("XDG_RUNTIME_DIR", None)
    os.environ["XDG_DOWNLOAD_DIR"] = str(home / "downloads")
    return own


def forget_user_settings() -> None:
    """Drop the developer's CHAINMARK_* settings (database, blobs, user, keymap…): the tests choose theirs."""
    for name in list(os.environ):
        if name.startswith("CHAINMARK_") and name not in SETTINGS_KEPT and not name.startswith(SETTING_PREFIXES_KEPT):
            del os.environ[name]


def give_children_default_interrupts() -> None:
    """A suite started in the background (``cmd &``, ``nohup``) inherits SIGINT and SIGQUIT ignored, and so
    would every chainmark process a test starts: a test that presses Ctrl-C on one would then wait for
    nothing. Catching SIGINT here (and defaulting SIGQUIT) gives the processes we start the default."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def remove_session_root(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)


def folder_modes(folder: Path, top: Path) -> dict[Path, int]:
    """The permission bits of ``folder`` and each folder above it up to ``top``."""
    modes = {}
    for up in [folder, *folder.parents]:
        modes[up] = up.stat().st_mode & 0o7777
        if up == top:
            break
    return modes


def changed_modes(before: dict[Path, int]) -> list[str]:
    """Folders of ``before`` whose bits differ now, put back as they were: a test that opened the shared
    temp folders to other users would make the ones after it (the sandbox refuses such a folder)
    depend on the order the tests ran in."""
    changed = []
    for folder, mode in before.items():
        now = folder.stat().st_mode & 0o7777 if folder.exists() else mode
        if now != mode:
            changed.append(f"{folder}: {mode:o} -> {now:o}")
            folder.chmod(mode)
    return changed


# ---- what a session leaves running ----


def _command_line(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200] or "?"


def _parent_of(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # the command name may hold spaces and parentheses
    return int(fields[1]) if fields[0] != "Z" else None  # a zombie is already finished


def _pids() -> list[int]:
    if not _PROC.is_dir():
        return []
    return [int(entry.name) for entry in os.scandir(_PROC) if entry.name.isdigit()]


def processes_left(root: Path | None) -> dict[int, str]:
    """Processes, other than this one, that descend from this process or (given ``root``) run with it
    in their environment: what the session started and did not stop (pid → command line).

    An xdist worker passes no root: its sibling workers carry the session folder too."""
    me = os.getpid()
    mark = os.fsencode(str(root)) if root is not None else None
    parents = {pid: _parent_of(pid) for pid in _pids()}
    found: dict[int, str] = {}
    for pid, parent in parents.items():
        if pid == me or parent is None:
            continue
        if _descends_from(pid, me, parents) or (mark is not None and _environment_holds(pid, mark)):
            found[pid] = _command_line(pid)
    return found


def _descends_from(pid: int, ancestor: int, parents: dict[int, int | None]) -> bool:
    seen = set()
    current: int | None = parents.get(pid)
    while current and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        current = parents.get(current)
    return False


def _environment_holds(pid: int, mark: bytes) -> bool:
    try:
        return mark in (_PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, or another user's process we may not read
        return False


def stop_multiprocessing_helpers() -> None:
    """End this interpreter's multiprocessing fork server and resource tracker and run its exit
    clean-up: they belong to the interpreter (which would do this on exit), not to the test that
    first needed them."""
    import sys

    for module, attribute in (
        ("multiprocessing.forkserver", "_forkserver"),
        ("multiprocessing.resource_tracker", "_resource_tracker"),
    ):
        helper = getattr(sys.modules.get(module), attribute, None)
        stop = getattr(helper, "_stop", None)
        if stop is not None:
            stop()
    util = sys.modules.get("multiprocessing.util")
    if util is not None:  # what multiprocessing does at exit, now: e.g. its temp folder goes before ours
        util._run_finalizers()


def wait_for_processes_to_end(root: Path | None, timeout_s: float) -> dict[int, str]:
    """``processes_left`` once none remain or the timeout passes (xdist workers and servers being
    stopped take a moment to exit after their teardown)."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = processes_left(root)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def listening_sockets() -> list[str]:
    """TCP and Unix sockets this process holds open in the listening state (servers not stopped)."""
    inodes = set()
    fds = _PROC / "self" / "fd"
    if not fds.is_dir():
        return []
    for fd in os.listdir(fds):
        try:
            target = os.readlink(fds / fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return _listening_tcp(inodes) + _listening_unix(inodes)


def _listening_tcp(inodes: set[str]) -> list[str]:
    found = []
    for table in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "self" / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.append(f"{table} port {int(fields[1].rsplit(':', 1)[1], 16)}")
    return found


def _listening_unix(inodes: set[str]) -> list[str]:
    try:
        lines = (_PROC / "self" / "net" / "unix").read_text().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        accepting = int(fields[3], 16) & 0x10000  # __SO_ACCEPTCON: a listening socket
        if accepting and fields[6] in inodes:
            found.append(f"unix socket {fields[7] if len(fields) > 7 else '(unnamed)'}")
    return found


def stop(pids: dict[int, str]) -> None:
    """Terminate leftovers of this session (by their pid) so they do not outlive the failed run."""
    import signal

    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def wait_for_pid_to_end(pid: int, timeout_s: float) -> bool:
    """True once ``pid`` has finished (gone, or a zombie waiting for its parent) within the timeout."""
    deadline = time.monotonic() + timeout_s
    while (_PROC / str(pid)).exists() and _parent_of(pid) is not None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
