"""The escape suite against GTA Solver and Plot, called through the tool registry (issue 14, item 1)."""

from __future__ import annotations

import socket
import time
import uuid

import pytest

from evaluation.sandbox import ENV_BWRAP
from evaluation.tools import ToolContext, ToolSettings, execute
from evaluation.tools.sandbox import Limits, run_code
from tests.support.sandbox_escapes import CANARY, attack, detach, requires_os_sandbox, wait_until_gone

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
