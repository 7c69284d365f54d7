"""Model-written Python for code mode, run in the one OS-level sandbox (``evaluation.sandbox``).

The OS boundary (bubblewrap namespaces, uid 65534, clean environment, kernel limits, wall-clock kill)
is what holds. Inside it ``sandbox_boot.py`` adds Agentic-MME's conveniences and defence in depth:
audit hooks that refuse sockets, process creation, native-code loading and file access outside the
folder, and saves outside the folder redirected into it. The result says which layers were active.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluation.sandbox import Job, Limits, SandboxUnavailable, run

BOOT = Path(__file__).with_name("sandbox_boot.py")
MARK = "[sandbox]"

SandboxLimits = Limits
__all__ = ["SandboxLimits", "SandboxResult", "SandboxUnavailable", "run_python"]


@dataclass
class SandboxResult:
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool = False
    killed_reason: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_s: float = 0.0
    isolation: list[str] = field(default_factory=list)
    backend: str = "bwrap"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_slots: dict[asyncio.AbstractEventLoop, tuple[int, asyncio.Semaphore]] = {}
_share = 1  # harness processes the run's slots are split between (see harness/procs.py)


def set_process_share(processes: int) -> None:
    """This process runs one of ``processes`` parts of a run: it takes that share of the slots, so
    the cap holds over the whole run (never below one slot each)."""
    global _share
    _share = max(1, processes)


def sandbox_slots() -> int:
    """How many sandboxes may run at once: the ``sandbox_slots`` setting, else the CPUs this process may use.

    Model-written code is CPU work: 32 sandboxes started at once on 2 cores each take 16 times longer
    and every round waits for the slowest, so the cap is the core count whatever ``-j`` is."""
    from store.settings import current

    configured = current().sandbox_slots
    if configured:
        return max(1, configured // _share)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus // _share)


def _slot(loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
    size = sandbox_slots()
    held = _slots.get(loop)
    if held is None or held[0] != size:
        for old in [k for k in _slots if k.is_closed()]:
            del _slots[old]
        held = _slots[loop] = (size, asyncio.Semaphore(size))
    return held[1]


async def run_python(
    code: str,
    workdir: Path,
    *,
    save_dir: Path,
    env: dict[str, str] | None = None,
    limits: Limits | None = None,
    allow_unsafe: bool = False,
) -> SandboxResult:
    """Run ``code`` with ``workdir`` as its folder; never raises for anything the code does (raises
    :class:`SandboxUnavailable` when there is no OS-level sandbox and ``allow_unsafe`` is off)."""
    limits = limits or Limits()
    cfg = {"workdir": str(workdir), "save_dir": str(save_dir)}
    job = Job(
        BOOT,
        workdir,
        args=["{box}/config.json"],
        env=dict(env or {}),
        files={"config.json": json.dumps(cfg).encode(), "code.py": code.encode("utf-8", "surrogatepass")},
    )
    cancel = threading.Event()
    try:
        async with _slot(asyncio.get_running_loop()):
            outcome = await asyncio.to_thread(run, job, limits, allow_unsafe=allow_unsafe, cancel=cancel)
    except asyncio.CancelledError:
        cancel.set()
        raise
    stderr = outcome.stderr.decode("utf-8", "replace")
    why = outcome.killed_reason
    if why is None and (f"{MARK} killed: memory" in stderr or "MemoryError" in stderr):
        why = "memory"
    if why is None and f"{MARK} blocked:" in stderr:
        line = next(ln for ln in stderr.splitlines() if f"{MARK} blocked:" in ln)
        why = "blocked: " + line.split(f"{MARK} blocked:", 1)[1].strip()
    isolation = [*outcome.isolation, "audit-guards"]
    return SandboxResult(
        outcome.stdout.decode("utf-8", "replace"),
        stderr,
        outcome.exit_code,
        outcome.timed_out,
        why,
        outcome.stdout_truncated,
        outcome.stderr_truncated,
        outcome.duration_s,
        isolation,
        outcome.backend,
    )
