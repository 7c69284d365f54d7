"""The escape suite against GTA Solver and Plot, called through the tool registry (issue 14, item 1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evaluation.sandbox import ENV_BWRAP
from evaluation.tools import ToolContext, ToolSettings, execute
from evaluation.tools.sandbox import Limits, run_code
from tests.support.sandbox_escapes import (
    CANARY,
    as_second_user,
    attack,
    detach,
    requires_os_sandbox,
    second_user_unavailable,
    wait_for,
    wait_until_gone,
)

needs_os_sandbox = requires_os_sandbox()


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


def _check_report(report: str, listener: socket.socket, host_file, outside) -> None:
    assert "ENV" in report and "READ /etc/passwd sandbox:x:65534" in report  # the attack really ran
    assert CANARY not in report and "root:x:0:0" not in report and "SERPER" not in report
    assert "no /etc/shadow" in report and f"no {host_file}" in report and "no network" in report
    assert "CONNECTED" not in report and not outside.exists()
    with pytest.raises(BlockingIOError):
        listener.accept()


@needs_os_sandbox
@pytest.mark.parametrize("tool", ["Solver", "Plot"])
def test_solver_and_plot_escape_suite(tool, listener, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("SERPER_API_KEY", CANARY)
    host_file, outside = tmp_path / "secret.txt", tmp_path / "written-from-sandbox.txt"
    host_file.write_text(CANARY)
    code = attack(listener.getsockname()[1], str(outside), str(host_file))
    # Solver hands the report back as its answer; Plot's only text channel is its error message
    tail = (
        "\ndef solution():\n    return REPORT\n"
        if tool == "Solver"
        else "\ndef solution():\n    raise RuntimeError(REPORT)\n"
    )
    r = execute("gta", tool, {"command": "```python\n" + code + tail + "```"}, ToolContext())
    report = r.text if tool == "Solver" else r.error
    assert r.ok == (tool == "Solver"), r.error
    _check_report(report or "", listener, host_file, outside)


@needs_os_sandbox
def test_detached_pipe_holders_die_and_do_not_stretch_the_wall_limit():
    wall = 2.0
    marker = f"cm-solver-{uuid.uuid4().hex}"
    started = time.monotonic()
    r = run_code(
        "solver",
        detach(marker, then="time.sleep(600)\ndef solution():\n    return 'x'\n"),
        Limits(wall_seconds=wall, cpu_seconds=5),
    )
    elapsed = time.monotonic() - started
    assert r["ok"] is False and r["error"] == f"wall-clock limit of {wall:g} s exceeded"
    assert wall <= elapsed < wall + 3
    assert wait_until_gone(marker) == []
    marker = f"cm-solver-fast-{uuid.uuid4().hex}"
    started = time.monotonic()
    r = run_code(
        "solver", detach(marker, then="def solution():\n    return 'done'\n"), Limits(wall_seconds=wall, cpu_seconds=5)
    )
    assert r["ok"] and r["text"] == "done" and time.monotonic() - started < wall
    assert wait_until_gone(marker) == []


@needs_os_sandbox
def test_plot_output_that_is_a_link_is_not_followed():
    code = (
        "import os\nimport matplotlib.pyplot as plt\ndef solution():\n"
        "    fig = plt.figure()\n"
        "    fig.savefig = lambda *a, **k: os.symlink('/proc/self/environ', 'plot.png')\n"
        "    return fig\n"
    )
    r = run_code("plot", code)
    assert r["ok"] is False and "could not be collected" in r["error"] and CANARY not in str(r)


def test_solver_without_a_backend_is_refused_unless_unsafe(monkeypatch):
    monkeypatch.setenv(ENV_BWRAP, "none")
    command = "def solution():\n    return str(6 * 7)"
    r = execute("gta", "Solver", {"command": command}, ToolContext(settings=ToolSettings()))
    assert not r.ok and "no OS-level sandbox" in r.error and "--unsafe-in-process-sandbox" in r.error
    r = execute(
        "gta", "Solver", {"command": command}, ToolContext(settings=ToolSettings(unsafe_in_process_sandbox=True))
    )
    assert r.ok and r.text == "42" and "UNSAFE-in-process" in r.data["isolation"]


def test_tools_run_cli_refuses_without_a_backend_and_runs_when_told_unsafe(monkeypatch):
    from click.testing import CliRunner

    from tui.cli import cli

    monkeypatch.setenv(ENV_BWRAP, "none")
    args = ["tools", "run", "Solver", "--no-db", "--args", '{"command": "def solution():\\n    return str(6 * 7)"}']
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and "no OS-level sandbox" in r.output
    r = CliRunner().invoke(cli, [*args, "--unsafe-in-process-sandbox"])
    assert r.exit_code == 0 and r.output.strip() == "42", r.output


PLANT = r"""
import os, shutil, time
def solution():
    shutil.copy("/bin/bash", "rootsh")
    os.chmod("rootsh", 0o4755)
    os.chmod(".", 0o755)
    for up in ("..", "../.."):
        try:
            os.chmod(up, 0o755)
        except OSError:
            pass
    here = os.getcwd()
    mount = next(line for line in open("/proc/self/mountinfo") if line.split()[4] == here)
    open("planted", "w").close()
    while not os.path.exists("go"):
        time.sleep(0.02)
    return mount
"""


@pytest.fixture
def shared_temp(tmp_path, monkeypatch):
    """A private stand-in for /tmp: world-writable and sticky like the real one, and the temp folder
    of everything this test starts."""
    root = tmp_path / "tmp"
    root.mkdir()
    root.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


@needs_os_sandbox
def test_a_setuid_file_planted_by_solver_code_is_out_of_another_users_reach(shared_temp):
    """Issue 31 item 1: model code copies a shell, makes it setuid and opens its folder to everyone,
    then waits. Another local user must not reach, let alone run, it."""
    reason = second_user_unavailable()
    if reason:
        pytest.skip(reason)
    with ThreadPoolExecutor(1) as pool:
        call = pool.submit(run_code, "solver", PLANT, Limits(wall_seconds=90, cpu_seconds=30))
        planted = wait_for(lambda: list(shared_temp.glob("chainmark-tool-*/**/planted")), what="the plant")[0]
        try:
            rel = planted.with_name("rootsh").relative_to(shared_temp)
            assert as_second_user("id -u; ls -d chainmark-tool-*", str(shared_temp)).stdout.split()[0] == "65534"
            other = as_second_user(f"ls -l {rel}; ./{rel} -p -c 'id -u; cat /etc/shadow'", str(shared_temp))
        finally:
            (planted.parent / "go").touch()
        result = call.result(timeout=120)
    assert "rws" not in other.stdout and "root:" not in other.stdout and other.stdout.strip() == "", other
    assert "Permission denied" in other.stderr, other
    assert result["ok"] and " nosuid" in " " + result["text"].replace(",", " "), result  # and nosuid inside
    assert list(shared_temp.iterdir()) == []  # nothing left behind


WAIT_FOR_GO = r"""
import os, time
def solution():
    open("started", "w").close()
    while not os.path.exists("go"):
        time.sleep(0.02)
    return "finished"
"""

_HOLDER = (
    "import sys, time\nfrom store.sandbox_folders import held_folder\n"
    "with held_folder(sys.argv[1]) as folder:\n    print(folder, flush=True)\n    time.sleep(600)\n"
)


def _folder_held_by_a_process(prefix: str, temp_root) -> tuple[subprocess.Popen, Path]:
    """A sandbox folder held (locked) by another process, as a second chainmark would hold it."""
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "TMPDIR": str(temp_root), "PYTHONPATH": repo}
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, prefix], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


@needs_os_sandbox
def test_gc_beside_a_live_sandbox_removes_only_folders_whose_owner_is_gone(shared_temp, tmp_path):
    """Issue 31 item 4: ``gc --min-age 0`` (and the housekeeping call) beside a running Solver call and
    another process's live code-mode folder takes only the folder of a process killed with -9."""
    from click.testing import CliRunner

    from evaluation.sandbox.housekeeping import remove_leftovers
    from tui.cli import cli

    killed, dead = _folder_held_by_a_process("chainmark-code-", shared_temp)
    killed.kill()
    killed.wait()
    other, elsewhere = _folder_held_by_a_process("chainmark-code-", shared_temp)
    try:
        with ThreadPoolExecutor(1) as pool:
            call = pool.submit(run_code, "solver", WAIT_FOR_GO, Limits(wall_seconds=90, cpu_seconds=30))
            started = wait_for(lambda: list(shared_temp.glob("chainmark-tool-*/work/started")), what="the sandbox")
            try:
                live = sorted(p for p in shared_temp.iterdir() if p not in (dead, elsewhere))
                assert [p.name.rsplit("-", 1)[0] for p in live] == ["chainmark-sbx", "chainmark-tool"]
                hours_ago = time.time() - 7 * 3600  # older than any default: only the lock keeps them
                for folder in (dead, elsewhere, *live):
                    os.utime(folder, (hours_ago, hours_ago))
                assert [x.path for x in remove_leftovers(0, dry_run=True)] == [dead]
                r = CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "gc", "--min-age", "0"])
                assert r.exit_code == 0 and f"remove temp {dead}" in r.output, r.output
                assert str(elsewhere) not in r.output and not any(str(p) in r.output for p in live)
                assert remove_leftovers(0) == []
            finally:
                (started[0].parent / "go").touch()
            result = call.result(timeout=120)
        assert result["ok"] and result["text"] == "finished", result
        assert not dead.exists() and elsewhere.exists()
    finally:
        other.kill()
        other.wait()


KEYRING_PROBE = r"""
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    ret = libc.syscall(NUMBERS[name], *args)
    return "ok" if ret >= 0 else errno_name(ctypes.get_errno())
def errno_name(code):
    import errno
    return errno.errorcode.get(code, str(code))
def solution():
    buf = ctypes.create_string_buffer(4096)
    seen = {
        "read_session": call("keyctl", 11, -3, buf, 4096),  # KEYCTL_READ of @s: the ids it holds
        "search": call("request_key", b"user", b"chainmark-canary", None, 0),
        "add_key": call("add_key", b"user", b"x", b"y", 1, -3),
    }
    for name in DENIED:
        seen[name] = call(name, 0, 0, 0, 0, 0)
    try:
        seen["proc_keys"] = open("/proc/keys").read()
    except OSError as exc:
        seen["proc_keys"] = type(exc).__name__
    seen["leak"] = bytes(buf.raw).rstrip(b"\0").hex()
    return json.dumps(seen)
"""

_IN_A_FRESH_KEYRING = r"""
import ctypes, json, sys
from evaluation.tools.sandbox import Limits, run_code
import pyseccomp
arch = pyseccomp.system_arch()
numbers = {n: int(pyseccomp.resolve_syscall(arch, n)) for n in ["keyctl", "add_key", "request_key", *sys.argv[2:]]}
libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(numbers["keyctl"], 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING: a fresh one of our own
key = libc.syscall(numbers["add_key"], b"user", b"chainmark-canary", sys.argv[1].encode(), len(sys.argv[1]), -3)
assert key > 0, ctypes.get_errno()
buf = ctypes.create_string_buffer(256)
assert libc.syscall(numbers["keyctl"], 11, key, buf, 256) == len(sys.argv[1])  # the canary is really there
code = f"NUMBERS = {numbers!r}\nDENIED = {sys.argv[2:]!r}\n" + sys.stdin.read()
print(json.dumps(run_code("solver", code, Limits(wall_seconds=60))))
"""


@needs_os_sandbox
def test_the_keyring_of_the_user_who_started_chainmark_is_out_of_reach(shared_temp):
    """Issue 31 item 3: chainmark is started in a session keyring holding a canary; Solver code that
    reads the session keyring, searches for the key or adds one gets EPERM, as do the other calls
    the filter denies."""
    denied = ["bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "unshare", "mount", "ptrace", "setns"]
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "TMPDIR": str(shared_temp), "PYTHONPATH": repo}
    done = subprocess.run(
        [sys.executable, "-c", _IN_A_FRESH_KEYRING, CANARY, *denied],
        input=KEYRING_PROBE,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"], result
    seen = json.loads(result["text"])
    assert CANARY not in done.stdout and "chainmark-canary" not in seen.pop("proc_keys")
    assert seen == {"read_session": "EPERM", "search": "EPERM", "add_key": "EPERM", "leak": ""} | {
        name: "EPERM" for name in denied
    }
    assert "seccomp-filter" in result["isolation"] and "fresh-session-keyring" in result["isolation"]


THREE_CHILDREN = r"""
import subprocess, sys
CHILD = "import sys\nblock = bytearray(1200 * 1024 * 1024)\nprint('held', flush=True)\nsys.stdin.read()\n"
def solution():
    kids = [
        subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for _ in range(3)
    ]
    held = [kid.stdout.readline().strip() == b"held" for kid in kids]
    for kid in kids:
        kid.stdin.close()
        kid.wait()
    return f"{sum(held)} of 3 children held 1.2 GB"
"""

SHM_FILL = r"""
import os
def solution():
    try:
        open("/dev/planted", "w")
        dev = "/dev writable"
    except OSError as e:
        dev = f"/dev errno {e.errno}"
    written = 0
    try:
        for i in range(16):  # 16 x 25 MB at most: bounded even where nothing stops it
            with open(f"/dev/shm/fill{i}", "wb") as fh:
                for _ in range(25):
                    fh.write(b"x" * (1 << 20))
                    fh.flush()
                    written += 1
    except OSError as e:
        return f"{dev}; /dev/shm stopped at {written} MB: errno {e.errno}"
    return f"{dev}; /dev/shm took all {written} MB"
"""


@needs_os_sandbox
def test_one_memory_budget_holds_for_the_whole_sandbox(shared_temp):
    """Issue 31 item 3: three children asking for 1.2 GB each under a 2 GB budget, and /dev/shm as a
    store. (The children's memory is never touched, so the test itself stays small either way.)"""
    limits = Limits(wall_seconds=60, cpu_seconds=30, memory_bytes=2 * 1024**3)
    r = run_code("solver", THREE_CHILDREN, limits)
    assert r["ok"] is False and r["error"] == "memory limit of 2048 MB exceeded", r
    assert any(i.startswith("memory-budget-2048mb-as-4x") for i in r["isolation"]), r["isolation"]
    r = run_code("solver", SHM_FILL, limits)
    assert r["ok"], r
    dev, shm = r["text"].split("; ")
    assert dev == "/dev errno 30"  # read-only: nothing unsized to fill
    assert shm.startswith("/dev/shm stopped at ") and shm.endswith("errno 28"), r  # ENOSPC
    assert int(shm.split("stopped at ")[1].split()[0]) <= 64


_PNG_HEADER_ONLY = r"""
import struct, zlib
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
def huge_png():  # 30000 x 30000 (900 megapixels) by its header; a few bytes on disk
    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
"""


@needs_os_sandbox
@pytest.mark.parametrize(
    ("plant", "why"),
    [
        ("huge_png()", "900000000"),
        ("b'<html><script>alert(1)</script></html>'", "not a readable image"),
        ("gif()", "GIF image, not PNG"),
    ],
)
def test_plot_outputs_are_checked_like_code_modes_images(plant, why):
    """Issue 31 item 5: Plot's figure is collected only as a real PNG within the pixel limit."""
    code = (
        _PNG_HEADER_ONLY
        + "import io\nfrom PIL import Image\nimport matplotlib.pyplot as plt\n"
        + "def gif():\n    buf = io.BytesIO()\n    Image.new('RGB', (4, 4)).save(buf, 'GIF')\n    return buf.getvalue()\n"
        + "def solution():\n    fig = plt.figure()\n"
        + f"    fig.savefig = lambda *a, **k: open('plot.png', 'wb').write({plant})\n"
        + "    return fig\n"
    )
    r = execute("gta", "Plot", {"command": code}, ToolContext())
    error = r.error or ""
    assert not r.ok and "the plot could not be collected" in error and why in error, error
    assert not r.images
