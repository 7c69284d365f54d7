"""Model-written Python in a subprocess sandbox, for code mode.

Layers, each enough on its own for most escapes: a private folder; rlimits on CPU time, address
space, file size, open files and (when not root, as root is exempt) process count;
a network namespace with no interfaces (``unshare -n``) when the system allows it; audit hooks that
refuse sockets, process creation, native-code loading and file access outside the folder (reads of
the Python installation excepted); saves outside the folder redirected into it; a wall-clock timeout
that kills the whole process group; stdout/stderr capped. The result says which layers were active.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

BOOT = Path(__file__).with_name("sandbox_boot.py")
MARK = "[sandbox]"


@dataclass
class SandboxLimits:
    cpu_seconds: int = 30
    wall_seconds: float = 60.0
    memory_mb: int = 2048
    max_processes: int = 64
    file_mb: int = 64
    output_bytes: int = 32_000

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "SandboxLimits":
        known = {k: v for k, v in (data or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=1)
def network_wrapper() -> tuple[str, ...]:
    """``unshare -n`` as root, ``unshare -rn`` (user namespace) otherwise, or nothing if neither works."""
    exe = shutil.which("unshare")
    if not exe:
        return ()
    for args in ((exe, "-n", "--"), (exe, "-rn", "--")):
        try:
            ok = subprocess.run([*args, "true"], capture_output=True, timeout=5).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return args
    return ()


def _nproc_limit(extra: int) -> int | None:
    """RLIMIT_NPROC counts every process of the user, so the cap is what the user runs now plus
    ``extra``. Root is exempt from the limit in the kernel: then the audit guards and the process-group
    kill are what stop a fork bomb (and ``None`` is returned)."""
    uid = os.geteuid()
    if uid == 0:
        return None
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid and len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count + extra


async def _read_capped(stream: asyncio.StreamReader, cap: int, flood: int, on_flood: Any) -> tuple[bytes, bool]:
    kept = bytearray()
    total = 0
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        total += len(chunk)
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]
        if total > flood:
            on_flood()
            break
    return bytes(kept), total > cap


def _signal_reason(code: int | None) -> str | None:
    if code is None or code >= 0:
        return None
    sig = -code
    return {signal.SIGXCPU: "cpu_time", signal.SIGKILL: "killed", signal.SIGSEGV: "crashed (SIGSEGV)",
            signal.SIGABRT: "aborted (possibly out of memory)"}.get(sig, f"signal {sig}")


async def run_python(code: str, workdir: Path, *, save_dir: Path, env: dict[str, str] | None = None,
                     limits: SandboxLimits | None = None) -> SandboxResult:
    """Run ``code`` with ``workdir`` as its folder; never raises for anything the code does."""
    limits = limits or SandboxLimits()
    private = Path(tempfile.mkdtemp(prefix="chainmark-boot-"))
    os.chmod(private, 0o700)
    nproc = _nproc_limit(limits.max_processes)
    isolation = ["rlimits", "audit-guards", "private-folder", "process-group-kill"]
    try:
        code_path = private / "code.py"
        code_path.write_text(code)
        cfg = {"workdir": str(workdir), "save_dir": str(save_dir), "code_path": str(code_path),
               "cpu_seconds": limits.cpu_seconds, "memory_mb": limits.memory_mb, "file_mb": limits.file_mb,
               "max_processes": nproc}
        cfg_path = private / "config.json"
        cfg_path.write_text(json.dumps(cfg))
        if nproc is not None:
            isolation.append("nproc")
        wrapper = network_wrapper()
        if wrapper:
            isolation.append("no-network-namespace")
        child_env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "TMPDIR": str(workdir), "LANG": "C.UTF-8",
                     "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", "OMP_NUM_THREADS": "1",
                     "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
                     "MPLCONFIGDIR": str(workdir / ".mpl"), **(env or {})}
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *wrapper, sys.executable, "-B", "-s", str(BOOT), str(cfg_path), cwd=str(workdir), env=child_env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
        reason: list[str] = []

        def kill(why: str) -> None:
            if not reason:
                reason.append(why)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        flood = max(limits.output_bytes * 32, 1_000_000)
        reader = asyncio.gather(
            _read_capped(proc.stdout, limits.output_bytes, flood, lambda: kill("output_flood")),  # type: ignore[arg-type]
            _read_capped(proc.stderr, limits.output_bytes, flood, lambda: kill("output_flood")),  # type: ignore[arg-type]
            proc.wait())
        timed_out = False
        try:
            (out, out_cut), (err, err_cut), code_ = await asyncio.wait_for(asyncio.shield(reader), limits.wall_seconds)
        except TimeoutError:
            timed_out = True
            kill("wall_time")
            (out, out_cut), (err, err_cut), code_ = await reader
        except asyncio.CancelledError:
            kill("cancelled")
            raise
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # nothing it started may outlive it
        except (ProcessLookupError, PermissionError):
            pass
        stderr = err.decode("utf-8", "replace")
        why = reason[0] if reason else _signal_reason(code_)
        if why is None and f"{MARK} killed: memory" in stderr or (why is None and "MemoryError" in stderr):
            why = "memory"
        if why is None and f"{MARK} blocked:" in stderr:
            line = next(ln for ln in stderr.splitlines() if f"{MARK} blocked:" in ln)
            why = "blocked: " + line.split(f"{MARK} blocked:", 1)[1].strip()
        return SandboxResult(out.decode("utf-8", "replace"), stderr, code_, timed_out, why, out_cut, err_cut,
                             round(time.monotonic() - started, 3), isolation)
    finally:
        shutil.rmtree(private, ignore_errors=True)
