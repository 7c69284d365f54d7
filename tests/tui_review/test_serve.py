"""`chainmark serve`: a real textual-serve web server that answers with the app page."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

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


def _read_url(proc: subprocess.Popen, deadline: float) -> str:
    """The first ``…/?token=…`` URL the server prints (stderr is read in a thread, so a silent server
    cannot block the test past its deadline)."""
    found: dict[str, str] = {}
    ready = threading.Event()

    def read() -> None:
        for raw in proc.stderr:  # type: ignore[union-attr]
            line = raw.decode()
            if "?token=" in line:
                found["url"] = line.split(": ", 1)[1].strip()
                ready.set()
                return
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(max(0.0, deadline - time.monotonic())) and "url" in found, "no URL printed"
    return found["url"]


def test_serve_answers_http_only_with_the_token(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "--db", str(db_path), "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        url = _read_url(proc, deadline)
        assert url.startswith(f"http://127.0.0.1:{port}/?token=")  # loopback unless --host says otherwise
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    page = r.read().decode()
                break
            except urllib.error.HTTPError:
                raise
            except OSError:
                assert proc.poll() is None, "server exited"
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.2)
        token = url.split("token=", 1)[1]
        assert "chainmark" in page and f"ws://127.0.0.1:{port}/ws/{token}" in page
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
        assert refused.value.code == 403
    finally:
        proc.terminate()
        proc.wait(timeout=10)
