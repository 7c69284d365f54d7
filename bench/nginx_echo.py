"""A cheap OpenAI-compatible endpoint for benches: nginx with its echo module answers every chat
completion after a fixed latency with one fixed reply, so the server costs a few microseconds of C
per call instead of the scripted Python server's ~1 ms (at -j 256 × 0.2 s that server alone needed
more than one of the machine's two cores, leaving the harness nothing to be measured on).

Needs Debian's ``nginx`` and ``libnginx-mod-http-echo`` (``apt-get install nginx-light
libnginx-mod-http-echo``). The port is one the kernel just gave out for port 0; if another process
takes it before nginx binds it, nginx is started again on another (handing nginx the bound socket
through its ``NGINX`` variable crashes 1.22 without a master process). One nginx process (no
master), in the foreground: its CPU is that process's.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
ECHO_MODULE = Path("/usr/lib/nginx/modules/ngx_http_echo_module.so")
MODEL = "scripted-model"


def completion(content: str, *, model: str = MODEL) -> dict[str, Any]:
    """The chat completion nginx sends (the scripted server's shape for a text reply; usage is fixed,
    nginx cannot count the request)."""
    return {
        "id": "chatcmpl-nginx",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
    }


def available() -> str | None:
    """None when nginx and its echo module are installed, else what is missing."""
    if not Path(NGINX).exists():
        return "nginx is not installed (apt-get install nginx-light libnginx-mod-http-echo)"
    if not ECHO_MODULE.exists():
        return f"nginx's echo module is missing ({ECHO_MODULE}; apt-get install libnginx-mod-http-echo)"
    return None


def _quoted(text: str) -> str:
    """TEXT as one single-quoted nginx string ('$' would start a variable: none in the reply)."""
    if "$" in text:
        raise ValueError("nginx reply must not contain '$'")
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def config(port: int, workdir: Path, latency: float, reply: dict[str, Any]) -> str:
    body = json.dumps(reply, separators=(",", ":"))
    temp = " ".join(
        f"{kind}_temp_path {workdir / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""
load_module {ECHO_MODULE};
daemon off;
master_process off;
worker_processes 1;
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} warn;
events {{ worker_connections 8192; }}
http {{
    access_log off;
    {temp}
    client_max_body_size 64m;
    client_body_buffer_size 1m;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{
            default_type application/json;
            echo_read_request_body;
            echo_sleep {latency:.3f};
            echo -n {_quoted(body)};
        }}
    }}
}}
"""


def _end_with_parent() -> None:
    """In the forked child before exec: nginx gets SIGTERM when the bench dies, however it dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class NginxEcho:
    """nginx answering ``POST …/chat/completions`` with REPLY after LATENCY seconds; ``port``,
    ``pid``, ``cpu()`` (seconds of CPU it used so far). Use as a context manager."""

    def __init__(self, latency: float, reply: dict[str, Any]):
        missing = available()
        if missing:
            raise RuntimeError(missing)
        self.latency, self.reply = latency, reply
        self._dir = tempfile.TemporaryDirectory(prefix="chainmark-nginx-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> "NginxEcho":
        workdir = Path(self._dir.name)
        for _ in range(5):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
            conf = workdir / "nginx.conf"
            conf.write_text(config(self.port, workdir, self.latency, self.reply))
            (workdir / "error.log").write_bytes(b"")
            with open(workdir / "stderr", "wb") as log:
                self.proc = subprocess.Popen(
                    [NGINX, "-p", str(workdir), "-c", str(conf), "-e", str(workdir / "error.log")],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    preexec_fn=_end_with_parent,
                )
            atexit.register(self.stop)
            try:
                self._wait_ready(workdir)
                return self
            except RuntimeError as exc:
                if "Address already in use" not in str(exc):
                    self.stop()
                    raise
        self.stop()
        raise RuntimeError("nginx found no free port in 5 tries")

    def _wait_ready(self, workdir: Path) -> None:
        deadline = time.monotonic() + 10
        body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                said = (workdir / "stderr").read_text(errors="replace") + (workdir / "error.log").read_text(
                    errors="replace"
                )
                raise RuntimeError(f"nginx exited: {said[-2000:]}")
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{self.port}/v1/chat/completions",
                    data=body,
                    headers={"content-type": "application/json"},
                )
                with urllib.request.urlopen(request, timeout=5) as response:
                    json.loads(response.read())
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.05)

    def cpu(self) -> float | None:
        """CPU seconds (user + system) nginx has used, from /proc (Linux); None elsewhere."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """End nginx and remove its directory (again: nothing happens)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._dir.cleanup()

    def __enter__(self) -> "NginxEcho":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
