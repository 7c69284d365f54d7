"""GTA Solver (sympy) and Plot (matplotlib): model-written code runs in the one OS-level sandbox
(``evaluation.sandbox``: namespaces, uid 65534, clean environment, kernel limits, wall-clock kill) in
a fresh folder of its own; the figure is collected without following links.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.sandbox import Job, SandboxUnavailable, read_regular_file, work_folder
from evaluation.sandbox import Limits as SandboxLimits
from evaluation.sandbox import run as run_sandboxed
from evaluation.sandbox.outputs import MAX_IMAGE_PIXELS, OutputRefused, check_image
from evaluation.tools.result import ToolContext, ToolError, ToolOutput

CHILD = Path(__file__).with_name("sandbox_child.py")
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.S | re.I)
MAX_RESULT_BYTES = 1024 * 1024
MAX_PLOT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 20
    wall_seconds: float = 40.0
    memory_bytes: int = 2 * 1024**3  # the whole sandbox: processes, /tmp and /dev/shm together
    file_bytes: int = 64 * 1024**2
    max_processes: int = 4

    def for_sandbox(self) -> SandboxLimits:
        return SandboxLimits(
            cpu_seconds=self.cpu_seconds,
            wall_seconds=self.wall_seconds,
            memory_mb=max(1, self.memory_bytes // 1024**2),
            file_mb=max(1, self.file_bytes // 1024**2),
            max_processes=self.max_processes,
            output_bytes=4000,
        )


DEFAULT_LIMITS = Limits()


def extract_code(command: str) -> str:
    """The Python inside a markdown command: the fenced blocks joined, or the text itself."""
    blocks = _FENCE.findall(command)
    return "\n\n".join(blocks) if blocks else command


def run_code(mode: str, command: str, limits: Limits = DEFAULT_LIMITS, *, allow_unsafe: bool = False) -> dict[str, Any]:
    """Run ``solution()`` of the command in the sandbox; returns the child's JSON verdict plus, for
    plots, ``image_bytes`` and always ``isolation``. Limit breaches become ``{"ok": False, "error": ...}``.
    Raises :class:`SandboxUnavailable` when no OS-level sandbox works and ``allow_unsafe`` is off."""
    code = extract_code(command)
    with work_folder("chainmark-tool-") as work:
        request = json.dumps({"mode": mode, "code": code}).encode("utf-8", "surrogatepass")
        job = Job(CHILD, work, args=["{box}/request.json", "result.json"], files={"request.json": request})
        outcome = run_sandboxed(job, limits.for_sandbox(), allow_unsafe=allow_unsafe)
        meta = {"isolation": outcome.isolation, "sandbox_backend": outcome.backend}
        if outcome.timed_out:
            return {"ok": False, "error": f"wall-clock limit of {limits.wall_seconds:g} s exceeded", **meta}
        if outcome.killed_reason == "memory":  # the code or a process it started: the call fails
            return {"ok": False, "error": f"memory limit of {limits.memory_bytes // 1024**2} MB exceeded", **meta}
        try:
            result: dict[str, Any] = json.loads(read_regular_file(work, "result.json", MAX_RESULT_BYTES))
            if not isinstance(result, dict):
                raise ValueError("not an object")
        except (OutputRefused, FileNotFoundError, ValueError, OSError):
            if outcome.killed_reason in ("cpu_time", "killed"):
                return {"ok": False, "error": f"CPU time limit of {limits.cpu_seconds} s exceeded", **meta}
            if outcome.killed_reason == "processes":
                return {"ok": False, "error": "process limit exceeded", **meta}
            stderr = outcome.stderr.decode("utf-8", "replace").strip().splitlines()
            tail = stderr[-1:] or [f"exit status {outcome.exit_code}"]
            return {"ok": False, "error": f"the code crashed: {tail[0]}", **meta}
        result = {k: result[k] for k in ("ok", "text", "error", "image") if k in result}
        if result.get("ok") and result.get("image"):
            try:
                result["image_bytes"] = read_regular_file(work, "plot.png", MAX_PLOT_BYTES)
                check_image(result["image_bytes"], MAX_IMAGE_PIXELS, {"PNG"})  # as code mode checks its images
            except (OutputRefused, OSError) as exc:
                return {"ok": False, "error": f"the plot could not be collected: {exc}", **meta}
            result.pop("image")
        if outcome.stdout:
            result["stdout"] = outcome.stdout.decode("utf-8", "replace")[-2000:]
        return {**result, **meta}


def _run(mode: str, args: dict[str, Any], ctx: ToolContext, label: str) -> dict[str, Any]:
    unsafe = bool(getattr(ctx.settings, "unsafe_in_process_sandbox", False))
    try:
        result = run_code(mode, args["command"], allow_unsafe=unsafe)
    except SandboxUnavailable as exc:
        raise ToolError(f"{label}: {exc}") from None
    if not result["ok"]:
        raise ToolError(f"{label}: {result['error']}")
    return result


def run_solver(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    result = _run("solver", args, ctx, "Solver")
    return ToolOutput(text=result["text"], data={"answer": result["text"], "isolation": result["isolation"]})


def run_plot(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    result = _run("plot", args, ctx, "Plot")
    name = f"image/plot_{ctx.next_index}.png"
    return ToolOutput(
        text=f"[image]({name})",
        data={"path": name, "isolation": result["isolation"]},
        images=[result["image_bytes"]],
        image_names=[name],
    )
