"""GTA Solver (sympy) and Plot (matplotlib): model-written code runs in a child process with CPU,
memory, file-size and wall-clock limits (``resource.setrlimit``), in its own temp dir, with a
minimal environment — so an infinite loop or a memory bomb costs a bounded amount and no secret
from our environment is visible to it.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.tools.result import ToolContext, ToolError, ToolOutput

CHILD = Path(__file__).with_name("sandbox_child.py")
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.S | re.I)


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 20
    wall_seconds: float = 40.0
    memory_bytes: int = 2 * 1024**3
    file_bytes: int = 64 * 1024**2


DEFAULT_LIMITS = Limits()


def extract_code(command: str) -> str:
    """The Python inside a markdown command: the fenced blocks joined, or the text itself."""
    blocks = _FENCE.findall(command)
    return "\n\n".join(blocks) if blocks else command


def run_code(mode: str, command: str, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Run ``solution()`` of the command in a limited child; returns the child's JSON verdict plus,
    for plots, ``image_bytes``. Limit breaches become ``{"ok": False, "error": ...}``."""
    code = extract_code(command)
    with tempfile.TemporaryDirectory(prefix="chainmark-sandbox-") as tmp:
        out_file = Path(tmp) / "result.json"
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "MPLBACKEND": "Agg", "MPLCONFIGDIR": tmp,
               "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}

        def limit() -> None:  # runs in the child between fork and exec
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            os.setsid()

        try:
            proc = subprocess.run([sys.executable, "-I", str(CHILD), str(out_file)],
                                  input=json.dumps({"mode": mode, "code": code}), text=True, capture_output=True,
                                  cwd=tmp, env=env, preexec_fn=limit, timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": f"wall-clock limit of {limits.wall_seconds:g} s exceeded"}
        if out_file.exists():
            result: dict[str, Any] = json.loads(out_file.read_text(encoding="utf-8"))
        elif proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return {"ok": False, "error": f"CPU time limit of {limits.cpu_seconds} s exceeded"}
        else:
            tail = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            return {"ok": False, "error": f"the code crashed: {tail[0]}"}
        if result.get("ok") and result.get("image"):
            result["image_bytes"] = (Path(tmp) / result.pop("image")).read_bytes()
        if proc.stdout:
            result["stdout"] = proc.stdout[-2000:]
        return result


def run_solver(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    result = run_code("solver", args["command"])
    if not result["ok"]:
        raise ToolError(f"Solver: {result['error']}")
    return ToolOutput(text=result["text"], data={"answer": result["text"]})


def run_plot(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    result = run_code("plot", args["command"])
    if not result["ok"]:
        raise ToolError(f"Plot: {result['error']}")
    name = f"image/plot_{ctx.next_index}.png"
    return ToolOutput(text=f"[image]({name})", data={"path": name}, images=[result["image_bytes"]], image_names=[name])
