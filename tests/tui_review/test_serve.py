"""`chainmark serve`: a real textual-serve web server that answers with the app page."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import time
import urllib.request

from tui.commands.serve import serve_command
from tui.context import AppContext


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_command_runs_the_tui_on_the_same_database(db_path) -> None:  # type: ignore[no-untyped-def]
    args = shlex.split(serve_command(AppContext(db=str(db_path), actor="ann")))
    assert args[:3] == [sys.executable, "-m", "tui.cli"]
    assert args[3] == "--db" and str(db_path) in args[4] and args[5:] == ["--as", "ann"]


def test_serve_answers_http(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "--db", str(db_path), "serve", "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
                    page = r.read().decode()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.2)
        assert "chainmark" in page and f"ws://127.0.0.1:{port}/ws" in page
    finally:
        proc.terminate()
        proc.wait(timeout=10)
