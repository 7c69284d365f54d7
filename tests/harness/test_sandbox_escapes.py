"""The escape suite against code mode, through the real harness and the scripted OpenAI server,
plus the sandbox's limits with the in-process guard switched off (issue 14, items 2 and 3)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlmodel import select, col

from evaluation.harness import RunSpec, add_endpoint, start_run
from evaluation.harness.budgets import Budgets
from evaluation.harness.runner import RunError, create_run
from evaluation.harness.sandbox import SandboxLimits, run_python
from evaluation.sandbox import ENV_BWRAP, SandboxUnavailable
from evaluation.sandbox.outputs import OutputRefused, read_regular_file, scan_outputs
from store import session_scope
from store.models import Event, Run, Trajectory
from tests.support.sandbox_escapes import BYPASS, CANARY, attack, detach, requires_os_sandbox, wait_until_gone
from tests.support.scripted_openai import text
from tui.cli import cli
from tests.support.must import must

needs_os_sandbox = requires_os_sandbox()

SYMLINKS = (
    BYPASS
    + r"""
import os
from PIL import Image
os.makedirs("tool_images", exist_ok=True)
Image.new("RGB", (4, 4), (0, 255, 0)).save("tool_images/ok_1.png")
for name, target in [("passwd_2.png", "/etc/passwd"), ("environ_3.png", "/proc/self/environ"),
                     ("host_4.png", HOST_FILE)]:
    os.symlink(target, "tool_images/" + name)
os.symlink("/etc", "tool_images/etc_dir")
os.mkfifo("tool_images/fifo_5.png")
try:
    os.link("/etc/passwd", "tool_images/hard_6.png")
except OSError as e:
    print("no hard link", type(e).__name__)
print("planted")
"""
)


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


def _no_connection(srv: socket.socket) -> bool:
    try:
        srv.accept()
    except BlockingIOError:
        return True
    return False


def _files_without(root: Path, needle: bytes, skip: set[Path]) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p not in skip and needle in p.read_bytes()]


@needs_os_sandbox
def test_code_mode_escape_suite(
    engine, blobs, db_path, make_bench, scripted_openai, listener, tmp_path, tmp_path_factory, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    secret_dir = tmp_path_factory.mktemp("host-secret")
    host_file = secret_dir / "secret.txt"
    host_file.write_text(CANARY)
    outside = secret_dir / "written-from-sandbox.txt"
    marker_wall, marker_fast = f"cm-wall-{uuid.uuid4().hex}", f"cm-fast-{uuid.uuid4().hex}"
    make_bench("mme")
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "keyed", scripted_openai.base_url, "m", api_key_env="OPENAI_API_KEY")
    port = listener.getsockname()[1]
    scripted_openai.push(
        text("<code>\n" + attack(port, str(outside), str(host_file)) + "\nprint(REPORT)\n</code>"),
        text("<code>\n" + f"HOST_FILE = {str(host_file)!r}\n" + SYMLINKS + "</code>"),
        text("<code>\n" + detach(marker_wall, then="time.sleep(600)") + "</code>"),
        text("<code>\n" + detach(marker_fast) + "</code>"),
        text("<answer>red</answer>"),
    )
    wall = 3.0
    progress = start_run(
        engine,
        blobs,
        RunSpec(
            "mme",
            "keyed",
            "code",
            budgets=Budgets(10, 10, None, 300),
            sandbox={"wall_seconds": wall, "cpu_seconds": 10},
        ),
    )
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).one()
        execs = [
            e.payload
            for e in s.exec(
                select(Event)
                .where(Event.trajectory_id == traj.id, Event.kind == "code_exec")
                .order_by(col(Event.ordinal))
            )
        ]
        assert traj.status == "done" and traj.final_answer == "red"
    assert len(execs) == 4
    report = execs[0]["stdout"]
    # the guard was really switched off, and still: no secret, no host file, no network, no write
    assert "closure cell" in report and "bypassed 0" not in report
    assert CANARY not in report and "READ /etc/passwd sandbox:x:65534" in report and "root:x:0:0" not in report
    assert "no /etc/shadow" in report and f"no {host_file}" in report and "no network" in report
    assert "CONNECTED" not in report and _no_connection(listener) and not outside.exists()
    assert "bwrap" in execs[0]["isolation"] and "pid-namespace" in execs[0]["isolation"]
    # links planted in the folder are never followed when the harness collects images
    assert "planted" in execs[1]["stdout"] and execs[1]["files"] == ["tool_images/ok_1.png"]
    # a detached grandchild holding the pipe neither outlives the sandbox nor stretches the wall limit
    assert execs[2]["timed_out"] and execs[2]["killed_reason"] == "wall_time", execs[2]
    assert wall <= execs[2]["duration_s"] < wall + 3
    assert not execs[3]["timed_out"] and execs[3]["duration_s"] < wall
    assert wait_until_gone(marker_wall) == [] and wait_until_gone(marker_fast) == []
    # the canary reached nothing: database (events, replay cache), blobs, or any request body
    assert _files_without(tmp_path, CANARY.encode(), skip=set()) == []
    for req in scripted_openai.chat_requests():
        assert CANARY not in json.dumps(req.json) and "root:x:0:0" not in json.dumps(req.json)
    assert {r.headers["authorization"] for r in scripted_openai.chat_requests()} == {f"Bearer {CANARY}"}


def _run(code: str, tmp_path: Path, **limits) -> tuple:
    work = tmp_path / "work"
    (work / "tool_images").mkdir(parents=True)
    result = asyncio.run(
        run_python(
            code,
            work,
            save_dir=work / "tool_images",
            limits=SandboxLimits(**{"cpu_seconds": 5, "wall_seconds": 20, **limits}),
        )
    )
    return result, work


@needs_os_sandbox
def test_limits_hold_with_the_guard_switched_off(tmp_path):
    marker = f"cm-nproc-{uuid.uuid4().hex}"
    forks = (
        BYPASS
        + f"""
import os, time
n = 0
try:
    for _ in range(400):
        if os.fork() == 0:
            os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 60; : {marker}"])
        n += 1
except OSError as e:
    print("fork refused", type(e).__name__)
print("forked", n)
"""
    )
    procs, _ = _run(forks, tmp_path / "p", max_processes=12)
    assert procs.killed_reason == "processes" or (
        "fork refused" in procs.stdout and int(procs.stdout.split("forked")[1]) <= 12
    ), procs
    assert wait_until_gone(marker) == []
    mem, _ = _run(
        BYPASS + "a = []\nwhile True:\n    a.append(bytearray(50 * 1024 * 1024))", tmp_path / "m", memory_mb=300
    )
    assert mem.killed_reason == "memory"
    cpu, _ = _run(BYPASS + "while True:\n    pass", tmp_path / "c", cpu_seconds=1)
    assert cpu.killed_reason == "cpu_time" and cpu.duration_s < 10
    fill, work = _run(
        BYPASS + "f = open('big.bin', 'wb')\nfor _ in range(64):\n    f.write(b'x' * 1024 * 1024)",
        tmp_path / "d",
        file_mb=4,
    )
    assert "File too large" in fill.stderr and (work / "big.bin").stat().st_size <= 4 * 1024 * 1024
    tmpfill, _ = _run(BYPASS + "open('/tmp/x', 'wb').write(b'x' * 8 * 1024 * 1024)", tmp_path / "t", file_mb=4)
    assert "File too large" in tmpfill.stderr


def test_output_reader_never_follows_links_even_when_swapped_after_the_scan(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINMARK_CANARY_FOR_TEST", CANARY)
    folder = tmp_path / "out"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.png").write_bytes(b"fine")
    found = scan_outputs(folder, {".png"})
    assert list(found) == ["sub/a.png"] and read_regular_file(folder, "sub/a.png", 100) == b"fine"
    # the race: checked as a regular file, then re-pointed (the file, or a folder on its path)
    (folder / "sub" / "a.png").unlink()
    (folder / "sub" / "a.png").symlink_to("/proc/self/environ")
    with pytest.raises(OutputRefused):
        read_regular_file(folder, "sub/a.png", 1 << 20)
    (folder / "sub" / "a.png").unlink()
    (folder / "sub").rename(folder / "real")
    (folder / "sub").symlink_to("/etc")
    with pytest.raises(OSError):
        read_regular_file(folder, "sub/passwd", 1 << 20)
    (folder / "real" / "big.png").write_bytes(b"x" * 2000)
    with pytest.raises(OutputRefused, match="cap"):
        read_regular_file(folder, "real/big.png", 1000)
    os.mkfifo(folder / "real" / "fifo.png")
    started = time.monotonic()
    with pytest.raises(OutputRefused):
        read_regular_file(folder, "real/fifo.png", 1000)
    assert time.monotonic() - started < 5 and list(scan_outputs(folder, {".png"})) == ["real/big.png"]


def test_without_a_backend_model_code_is_refused_unless_the_user_says_unsafe(
    engine, blobs, db_path, make_bench, endpoint, scripted_openai, tmp_path, monkeypatch
):
    monkeypatch.setenv(ENV_BWRAP, "none")
    with pytest.raises(SandboxUnavailable, match="--unsafe-in-process-sandbox"):
        _run("print(1)", tmp_path)
    make_bench("mme", source_format="agentic-mme")
    with session_scope(engine, "tester") as s, pytest.raises(RunError, match="no OS-level sandbox"):
        create_run(s, RunSpec("mme", endpoint, "code"))
    r = CliRunner().invoke(cli, ["--db", str(db_path), "run", "-b", "mme", "-e", endpoint, "-m", "code"])
    assert r.exit_code != 0 and "--unsafe-in-process-sandbox" in r.output and not scripted_openai.chat_requests()
    scripted_openai.push(text("<code>\nprint('hello from', 6 * 7)\n</code>"), text("<answer>red</answer>"))
    r = CliRunner().invoke(
        cli, ["--db", str(db_path), "run", "-b", "mme", "-e", endpoint, "-m", "code", "--unsafe-in-process-sandbox"]
    )
    assert r.exit_code == 0, r.output
    run_id = int(r.stdout.splitlines()[0])
    with session_scope(engine) as s:
        assert must(s.get(Run, run_id)).config["unsafe_in_process_sandbox"] is True
        [p] = [e.payload for e in s.exec(select(Event).where(Event.kind == "code_exec"))]
    assert p["stdout"].strip() == "hello from 42" and p["sandbox_backend"] == "in-process"
    assert "UNSAFE-in-process" in p["isolation"]
    shown = CliRunner().invoke(cli, ["--db", str(db_path), "runs", "show", str(run_id)])
    assert "sandbox: UNSAFE in-process" in shown.output
    assert "unsafe-sandbox" in CliRunner().invoke(cli, ["--db", str(db_path), "runs", "list"]).output
    shown_json = json.loads(
        CliRunner().invoke(cli, ["--db", str(db_path), "runs", "show", str(run_id), "--json"]).output
    )
    assert shown_json["unsafe_in_process_sandbox"] is True
    scored = CliRunner().invoke(cli, ["--db", str(db_path), "score", str(run_id), "--no-write"])
    assert "WITHOUT an OS-level sandbox" in scored.output, scored.output


def test_gc_removes_old_sandbox_folders_only(tmp_path):
    from evaluation.sandbox.housekeeping import remove_leftovers

    old, fresh, other = tmp_path / "chainmark-code-old", tmp_path / "chainmark-tool-new", tmp_path / "unrelated"
    for d in (old, fresh, other):
        d.mkdir()
    victim = tmp_path / "keep.txt"
    victim.write_text("keep")
    (old / "link").symlink_to(victim)
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    os.utime(other, (time.time() - 7200, time.time() - 7200))
    assert [x.path for x in remove_leftovers(3600, tmp_path, dry_run=True)] == [old] and old.exists()
    assert [x.path for x in remove_leftovers(3600, tmp_path)] == [old]
    assert not old.exists() and fresh.exists() and other.exists() and victim.read_text() == "keep"


def test_unsafe_mode_still_kills_detached_children_it_can_find(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_BWRAP, "none")
    from tests.support.sandbox_escapes import detach

    marker = f"cm-unsafe-{uuid.uuid4().hex}"
    work = tmp_path / "work"
    (work / "tool_images").mkdir(parents=True)
    result = asyncio.run(
        run_python(
            detach(marker), work, save_dir=work / "tool_images", limits=SandboxLimits(wall_seconds=5), allow_unsafe=True
        )
    )
    assert result.backend == "in-process" and result.duration_s < 5
    assert wait_until_gone(marker) == []


@needs_os_sandbox
def test_fresh_tmp_is_size_capped_where_bwrap_can(tmp_path):
    from evaluation.sandbox import find_backend
    from evaluation.sandbox.launch import _supports_size

    if not _supports_size(must(find_backend()[0]).bwrap):
        pytest.skip("this bwrap has no --size (before 0.10): /tmp is capped per file only")
    code = BYPASS + (
        "import os\nfor i in range(6):\n    try:\n"
        "        open(f'/tmp/f{i}', 'wb').write(b'x' * 3 * 1024 * 1024)\n"
        "    except OSError as e:\n        print('refused', i, e.errno)\n        break\n"
    )
    result, _ = _run(code, tmp_path, file_mb=4, tmp_mb=8)
    assert "refused 2 28" in result.stdout, result  # ENOSPC on the third 3 MB file


@needs_os_sandbox
def test_the_sandbox_dies_with_a_killed_harness(tmp_path):
    import signal
    import subprocess
    import sys

    from tests.support.sandbox_escapes import surviving

    marker = f"cm-orphan-{uuid.uuid4().hex}"
    (tmp_path / "p.py").write_text(f"import os\nos.execv('/bin/sh', ['/bin/sh', '-c', 'sleep 120; : {marker}'])\n")
    script = (
        "import pathlib\nfrom evaluation.sandbox import Job, Limits, run\n"
        f"run(Job(pathlib.Path({str(tmp_path / 'p.py')!r}), pathlib.Path({str(tmp_path)!r})), "
        "Limits(wall_seconds=120))"
    )
    repo = str(Path(__file__).resolve().parents[2])
    host = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": repo})
    try:
        deadline = time.monotonic() + 30
        while not surviving(marker):
            assert time.monotonic() < deadline and host.poll() is None, "the sandbox never started"
            time.sleep(0.05)
        host.send_signal(signal.SIGKILL)  # kill -9 chainmark: nothing may be left running
        host.wait()
        assert wait_until_gone(marker) == []
    finally:
        host.kill()


@needs_os_sandbox
def test_filling_the_work_folder_with_many_files_is_stopped(tmp_path):
    many_small = BYPASS + "import os\nfor i in range(100000):\n    open(f'f{i}', 'w').close()\n"
    result, work = _run(many_small, tmp_path / "n", max_files=200)
    assert result.killed_reason == "disk_quota", result
    big = BYPASS + "for i in range(100):\n    open(f'b{i}', 'wb').write(b'x' * 3 * 1024 * 1024)\n"
    result, work = _run(big, tmp_path / "b", file_mb=4, disk_mb=16)
    assert result.killed_reason == "disk_quota", result
    # The cap is a watchdog polling the folder (a bind mount has no size limit), so how far a fast writer
    # overshoots depends on the machine's load; what must hold is that it was stopped before it finished.
    assert sum(p.stat().st_size for p in work.iterdir() if p.is_file()) < 100 * 3 * 1024 * 1024


def test_an_interpreter_under_tmp_stays_visible_after_the_fresh_tmp(tmp_path, monkeypatch):
    """A checkout (and its venv) under /tmp: the fresh /tmp must be mounted before the interpreter's folders,
    or the sandbox cannot start Python (this broke every sandbox run from a clone in /tmp)."""
    from evaluation.sandbox import launch

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    monkeypatch.setattr(launch, "_python_roots", lambda: [str(venv)])
    argv = launch.bwrap_argv("bwrap", tmp_path / "work", tmp_path / "box", {}, launch.Limits())
    tmpfs = max(i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] == "/tmp")
    bind = next(i for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == str(venv))
    work = next(i for i, a in enumerate(argv) if a == "--bind" and argv[i + 1] == str(tmp_path / "work"))
    assert tmpfs < bind and tmpfs < work


def test_process_watchdog_never_counts_the_hosts_processes() -> None:
    """While bwrap sets the sandbox up, its child still stands in the host's root: the host's /proc
    (every process on the machine) must not be counted as the sandbox's (it killed sympy as "over the
    process limit" on a busy machine)."""
    import subprocess

    from evaluation.sandbox.launch import _ProcessWatchdog

    parent = subprocess.Popen(["sh", "-c", "sleep 30 & wait"])
    try:
        watchdog = _ProcessWatchdog(parent.pid, 0)
        for _ in range(200):  # until the child is there to be looked at
            if Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text().split():
                break
            time.sleep(0.01)
        assert not watchdog.over()  # the host has far more than 3 processes; none of them is the sandbox's
        assert watchdog.root is not None  # it did look at the child
    finally:
        parent.kill()
        parent.wait()


@needs_os_sandbox
def test_special_mode_bits_are_stripped_after_every_run_and_open_work_folders_refused(tmp_path):
    """Issue 31 item 1: a code-mode folder outlives one run; nothing in it stays setuid/setgid."""
    plant = BYPASS + (
        "import os, shutil\nshutil.copy('/bin/sh', 'sh')\nos.chmod('sh', 0o6755)\n"
        "os.makedirs('d/e')\nos.chmod('d', 0o2777)\nshutil.copy('/bin/sh', 'd/e/sh2')\nos.chmod('d/e/sh2', 0o4000)\n"
    )
    result, work = _run(plant, tmp_path)
    assert result.exit_code == 0, result
    modes = {p.name: p.stat().st_mode for p in (work / "sh", work / "d", work / "d" / "e" / "sh2")}
    assert {name: mode & 0o6000 for name, mode in modes.items()} == {"sh": 0, "d": 0, "sh2": 0}
    assert modes["sh"] & 0o777 == 0o755  # only the special bits went
    opened = Path("/usr/share")  # no ancestor closed to other users (our own temp folders all have one)
    with pytest.raises(ValueError, match="only its owner can enter"):
        asyncio.run(run_python("print(1)", opened, save_dir=opened))
