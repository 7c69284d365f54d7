"""Start one sandboxed Python process, read its output against a deadline, and kill all of it.

Under bubblewrap the process gets its own user, mount, PID, network, IPC and UTS namespaces: uid
65534; read-only ``/usr``, ``/lib*``, ``/bin`` and the Python installation; a near-empty ``/etc``
with its own ``passwd``; a fresh ``/proc`` for its PID namespace (the host's processes, and so
``/proc/<ppid>/environ``, are not there); a fresh ``/tmp``; the work folder as the only writable
host path (at the same path as outside, inside a private parent: ``folders``); no network
interfaces; an environment built from nothing; a new empty session keyring (``new_keyring``) and
a seccomp filter (``seccomp``). Kernel limits (CPU, each process's share of the one memory budget:
``memory_split``, file size, open files, processes) are set inside by ``enter.py``;
the wall clock is kept outside: output is read with a deadline (a detached grandchild holding the
pipe cannot stretch it) and on expiry the outer ``bwrap`` is SIGKILLed, which takes the namespace's
init, and with it every descendant, down.

With no backend the code does not run, unless the caller explicitly allows the unsafe in-process
mode (rlimits, a clean environment, ``unshare -n`` where possible, and the caller's audit-hook
guards: defence in depth, not a boundary).
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluation.sandbox.backend import NO_BACKEND_HELP, Backend, candidates
from evaluation.sandbox.folders import require_private_parent
from evaluation.sandbox.outputs import strip_special_bits
from evaluation.sandbox.seccomp import SeccompUnavailable, filter_fd
from store.sandbox_folders import held_folder

ENTER = Path(__file__).with_name("enter.py")
NEW_KEYRING = Path(__file__).with_name("new_keyring.py")
BOX = "/sandbox"  # where the launcher's read-only files appear inside
UID = 65534
PRIVATE_PREFIX = "chainmark-sbx-"
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_MASKED_PROC_FILES = ("/proc/keys", "/proc/key-users", "/proc/timer_list", "/proc/sched_debug")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/fonts", "/etc/mime.types")
_MB = 1024 * 1024


class SandboxUnavailable(RuntimeError):
    """No OS-level sandbox here and the unsafe in-process mode was not allowed."""


@dataclass
class Limits:
    cpu_seconds: int = 30
    wall_seconds: float = 60.0
    memory_mb: int = 2048  # the whole sandbox: every process, its /tmp and /dev/shm (see memory_split)
    max_processes: int = 4
    file_mb: int = 64
    output_bytes: int = 32_000
    tmp_mb: int = 256
    shm_mb: int = 64
    disk_mb: int = 512  # everything in the work folder together
    max_files: int = 5000  # entries in the work folder

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Limits":
        known = {k: v for k, v in (data or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True)
class MemorySplit:
    """How one sandbox's memory budget is shared out where no cgroup enforces it: ``processes`` times
    ``per_process_mb`` (each process's address-space limit) plus the two tmpfs sizes stay within it."""

    per_process_mb: int
    tmp_mb: int
    shm_mb: int


MIN_PROCESS_MB = 48  # below this a Python interpreter cannot start


def memory_split(limits: Limits) -> MemorySplit:
    """The budget shared out; the tmpfs sizes are cut to a quarter and a sixteenth of it at most."""
    tmp = min(limits.tmp_mb, limits.memory_mb // 4)
    shm = min(limits.shm_mb, limits.memory_mb // 16)
    per_process = (limits.memory_mb - tmp - shm) // max(1, limits.max_processes)
    if per_process < MIN_PROCESS_MB:
        raise ValueError(
            f"sandbox memory budget of {limits.memory_mb} MB is too small for {limits.max_processes} processes "
            f"(each would get {per_process} MB): raise memory_mb or lower max_processes"
        )
    return MemorySplit(per_process, tmp, shm)


@dataclass
class Job:
    """``payload`` runs as ``__main__`` inside; ``files`` appear read-only under ``/sandbox``; ``"{box}"``
    in ``args`` stands for that folder; ``env`` is added to the clean environment."""

    payload: Path
    workdir: Path
    args: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    timed_out: bool = False
    killed_reason: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_s: float = 0.0
    backend: str = "bwrap"
    isolation: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def base_env(workdir: Path, tmp: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",  # each thread's malloc arena would take address space from the budget
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(workdir / ".mpl"),
        "PYTHONHASHSEED": "0",
    }


def _python_roots() -> list[str]:
    """Folders the interpreter and its packages live in, outside the system folders already mounted."""
    roots: list[str] = []
    for p in (
        sys.base_prefix,
        sys.prefix,
        os.path.dirname(sys.executable),
        os.path.dirname(os.path.realpath(sys.executable)),
    ):
        for q in {os.path.abspath(p), os.path.realpath(p)}:
            if q.endswith("/bin"):
                q = os.path.dirname(q)
            if q in ("/", "") or any(q == f"/{d}" or q.startswith(f"/{d}/") for d in _SYSTEM_DIRS):
                continue
            if os.path.isdir(q) and not any(q == r or q.startswith(r + "/") for r in roots):
                roots = [r for r in roots if not r.startswith(q + "/")] + [q]
    return sorted(roots)


@lru_cache(maxsize=8)
def _supports_size(bwrap: str) -> bool:
    try:
        return "--size" in subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False


def bwrap_argv(bwrap: str, workdir: Path, box: Path, env: dict[str, str], limits: Limits) -> list[str]:
    argv = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--uid",
        str(UID),
        "--gid",
        str(UID),
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]
    for name in _SYSTEM_DIRS:
        path = f"/{name}"
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    argv += ["--dir", "/etc"]
    for path in _ETC_FILES:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += [
        "--ro-bind",
        str(box / ".passwd"),
        "/etc/passwd",
        "--ro-bind",
        str(box / ".group"),
        "/etc/group",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    split = memory_split(limits)
    sized = _supports_size(bwrap)
    if sized:  # /dev itself read-only; its shm a tmpfs of its own, sized from the budget
        argv += ["--size", str(split.shm_mb * _MB), "--perms", "1777", "--tmpfs", "/dev/shm"]
    argv += ["--remount-ro", "/dev"]
    for path in _MASKED_PROC_FILES:  # Docker masks these too: the keys (descriptions) visible to our uid
        if os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]
    if sized:
        argv += ["--size", str(split.tmp_mb * _MB)]
    argv += ["--tmpfs", "/tmp"]
    # After the fresh /tmp: an interpreter or venv that lives under /tmp (a checkout there) stays visible.
    for root in _python_roots():
        argv += ["--ro-bind", root, root]
    argv += [
        "--bind",
        str(workdir),
        str(workdir),
        "--ro-bind",
        str(box),
        BOX,
        "--remount-ro",
        "/",
        "--chdir",
        str(workdir),
    ]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv


@lru_cache(maxsize=1)
def network_wrapper() -> tuple[str, ...]:
    """For the unsafe mode: ``unshare -n`` as root, ``unshare -rn`` otherwise, or nothing."""
    exe = shutil.which("unshare")
    if not exe:
        return ()
    for args in ((exe, "-n", "--"), (exe, "-rn", "--")):
        try:
            if subprocess.run([*args, "true"], capture_output=True, timeout=5).returncode == 0:
                return args
        except (OSError, subprocess.SubprocessError):
            pass
    return ()


def _nproc_budget(extra: int) -> int | None:
    """Unsafe mode: RLIMIT_NPROC counts every process of the user, so the cap is what the user runs
    now plus ``extra``; root is exempt in the kernel (``None``)."""
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


def _write_box(box: Path, job: Job, cfg: dict[str, Any]) -> None:
    box.mkdir(mode=0o700)
    shutil.copyfile(ENTER, box / "enter.py")
    shutil.copyfile(job.payload, box / "payload.py")
    (box / "limits.json").write_text(json.dumps(cfg))
    (box / ".passwd").write_text(f"sandbox:x:{UID}:{UID}:sandbox:{job.workdir}:/usr/sbin/nologin\n")
    (box / ".group").write_text(f"sandbox:x:{UID}:\n")
    for name, data in job.files.items():
        if "/" in name or name.startswith("."):
            raise ValueError(f"sandbox file names are plain names: {name!r}")
        (box / name).write_bytes(data)


def run(
    job: Job, limits: Limits | None = None, *, allow_unsafe: bool = False, cancel: threading.Event | None = None
) -> Outcome:
    """Run ``job`` and return what it printed and how it ended; never raises for anything the code
    does. Raises :class:`SandboxUnavailable` when no OS-level sandbox works and ``allow_unsafe`` is off."""
    limits = limits or Limits()
    require_private_parent(job.workdir)
    backend, why = find_backend()
    if backend is None and not allow_unsafe:
        raise SandboxUnavailable(f"model code not run: no OS-level sandbox ({why}); {NO_BACKEND_HELP}")
    with held_folder(PRIVATE_PREFIX) as private:
        try:
            if backend is None:
                return _run_unsafe(job, limits, private / "box", cancel)
            return _run_bwrap(job, limits, backend, private / "box", cancel)
        finally:
            strip_special_bits(job.workdir)


def _run_bwrap(job: Job, limits: Limits, backend: Backend, box: Path, cancel: threading.Event | None) -> Outcome:
    """The boundary: bubblewrap, entered through a new session keyring, under the seccomp filter."""
    _write_box(box, job, _kernel_limits(limits, limits.max_processes + 2))
    env = {**base_env(job.workdir, "/tmp"), **job.env}
    args = [a.replace("{box}", BOX) for a in job.args]
    seccomp_fd, seccomp_note = _seccomp_fd()
    argv = [
        sys.executable,
        "-I",
        "-S",
        "-B",
        str(NEW_KEYRING),
        *bwrap_argv(backend.bwrap, job.workdir, box, env, limits),
        *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
        "--",
        sys.executable,
        "-I",
        "-B",
        f"{BOX}/enter.py",
        f"{BOX}/limits.json",
        f"{BOX}/payload.py",
        *args,
    ]
    outer_env = {"PATH": "/usr/bin:/bin"}
    isolation = [
        "bwrap",
        "user-namespace-uid-65534",
        "mount-namespace-read-only-system",
        "pid-namespace",
        "network-namespace-empty",
        "ipc-uts-namespaces",
        "clean-environment",
        "fresh-session-keyring",
        seccomp_note,
        "fresh-tmp" + ("-size-capped" if _supports_size(backend.bwrap) else ""),
        "read-only-dev" + ("-sized-shm" if _supports_size(backend.bwrap) else "-no-shm"),
        f"memory-budget-{limits.memory_mb}mb-as-{limits.max_processes}x{memory_split(limits).per_process_mb}mb",
        "rlimits",
        "disk-quota-watchdog",
        "wall-clock-kill",
    ]
    isolation.append("process-count-watchdog" if os.geteuid() == 0 else "nproc-rlimit")
    isolation.append(f"host-uid-{os.geteuid()}-without-capabilities")
    fds = () if seccomp_fd is None else (seccomp_fd,)
    try:
        return _supervise(argv, outer_env, job.workdir, limits, cancel, True, isolation, fds)
    finally:
        for fd in fds:
            os.close(fd)


def _run_unsafe(job: Job, limits: Limits, box: Path, cancel: threading.Event | None) -> Outcome:
    """No boundary: a plain child process with rlimits (``--unsafe-in-process-sandbox``)."""
    nproc = _nproc_budget(limits.max_processes)
    _write_box(box, job, _kernel_limits(limits, nproc))
    tag = f"chainmark-unsafe-{uuid.uuid4().hex}"
    env = {**base_env(job.workdir, str(job.workdir)), **job.env, "CHAINMARK_SANDBOX_TAG": tag}
    args = [a.replace("{box}", str(box)) for a in job.args]
    wrapper = network_wrapper()
    argv = [
        *wrapper,
        sys.executable,
        "-I",
        "-B",
        str(box / "enter.py"),
        str(box / "limits.json"),
        str(box / "payload.py"),
        *args,
    ]
    outer_env = env
    isolation = [
        "UNSAFE-in-process",
        "clean-environment",
        "rlimits",
        "disk-quota-watchdog",
        "process-group-kill",
    ]
    isolation += ["nproc-rlimit"] if nproc else []
    isolation += ["network-namespace-empty"] if wrapper else []
    try:
        return _supervise(argv, outer_env, job.workdir, limits, cancel, False, isolation)
    finally:
        _kill_tagged(tag)


def _supervise(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    limits: Limits,
    cancel: threading.Event | None,
    namespaced: bool,
    isolation: list[str],
    pass_fds: tuple[int, ...] = (),
) -> Outcome:
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(cwd),
        start_new_session=True,
        close_fds=True,
        pass_fds=pass_fds,
    )
    reason: list[str] = []

    def kill(why: str) -> None:
        if not reason:
            reason.append(why)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    watchdog = _ProcessWatchdog(proc.pid, limits.max_processes) if namespaced and os.geteuid() == 0 else None
    disk = _DiskWatchdog(cwd, limits.disk_mb * _MB, limits.max_files)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    totals = {out_fd: 0, err_fd: 0}
    flood = max(limits.output_bytes * 32, 1_000_000)
    sel = selectors.DefaultSelector()
    for fd in buffers:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    deadline = started + limits.wall_seconds
    exited_at: float | None = None
    timed_out = False
    code: int | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                kill("wall_time")
                break
            if exited_at is not None and now - exited_at > 0.5:
                break  # the process is gone; under bwrap its namespace is too, so nothing keeps the pipe
            if cancel is not None and cancel.is_set():
                kill("cancelled")
                break
            for key, _ in sel.select(min(deadline - now, 0.05)):
                fd = key.fd
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(fd)
                    continue
                kept = buffers[fd]
                if len(kept) < limits.output_bytes:
                    kept += chunk[: limits.output_bytes - len(kept)]
                totals[fd] += len(chunk)
                if totals[fd] > flood:
                    kill("output_flood")
            if exited_at is None and proc.poll() is not None:
                exited_at = time.monotonic()
            if watchdog is not None and watchdog.over():
                kill("processes")
                break
            if disk.over():
                kill("disk_quota")
                break
    finally:
        sel.close()
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # nothing it started may outlive it
        except (ProcessLookupError, PermissionError):
            pass
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        proc.stdout.close()
        proc.stderr.close()
    if namespaced and code is not None and code > 128:
        code = -(code - 128)  # bwrap reports a child killed by signal N as 128 + N
    why = reason[0] if reason else _signal_reason(code)
    if why is None and _ran_out_of_memory(bytes(buffers[err_fd])):
        why = "memory"
    return Outcome(
        bytes(buffers[out_fd]),
        bytes(buffers[err_fd]),
        code,
        timed_out,
        why,
        totals[out_fd] > limits.output_bytes,
        totals[err_fd] > limits.output_bytes,
        round(time.monotonic() - started, 3),
        "bwrap" if namespaced else "in-process",
        isolation,
    )


def _kernel_limits(limits: Limits, nproc: int | None) -> dict[str, Any]:
    """What ``enter.py`` sets inside: each process gets its share of the memory budget."""
    return {**asdict(limits), "memory_mb": memory_split(limits).per_process_mb, "max_processes": nproc}


def _seccomp_fd() -> tuple[int | None, str]:
    """The compiled system-call filter as a pipe for ``bwrap --seccomp``, and how the run is labelled."""
    try:
        return filter_fd(), "seccomp-filter"
    except SeccompUnavailable:
        return None, "NO-seccomp-filter (libseccomp missing)"


def _kill_tagged(tag: str) -> None:
    """Unsafe mode has no PID namespace: best effort, kill the processes that still carry the run's
    tag in their environment (a ``setsid`` escapes the process-group kill; an ``exec`` with a new
    environment escapes this too, which is one reason the mode is called unsafe)."""
    needle = f"CHAINMARK_SANDBOX_TAG={tag}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if needle in fh.read():
                    os.kill(int(name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


def _ran_out_of_memory(stderr: bytes) -> bool:
    """A process of the sandbox (the code or a child it started) hit its share of the memory budget."""
    return b"MemoryError" in stderr or b"Cannot allocate memory" in stderr


def _signal_reason(code: int | None) -> str | None:
    if code is None or code >= 0:
        return None
    sig = -code
    names = {
        int(signal.SIGXCPU): "cpu_time",
        int(signal.SIGKILL): "killed",
        int(signal.SIGSEGV): "crashed (SIGSEGV)",
        int(signal.SIGABRT): "aborted (possibly out of memory)",
        int(signal.SIGXFSZ): "file_size",
    }
    return names.get(sig, f"signal {sig}")


class _DiskWatchdog:
    """The work folder is a bind mount of a host folder, which no mount option can size-cap: its total
    size and entry count are measured (links not followed) every quarter second, and exceeding
    either stops the sandbox. Each single file is also held by RLIMIT_FSIZE."""

    def __init__(self, folder: Path, max_bytes: int, max_entries: int, every_s: float = 0.25) -> None:
        self.folder, self.max_bytes, self.max_entries, self.every_s = folder, max_bytes, max_entries, every_s
        self.next_check = time.monotonic() + every_s

    def over(self) -> bool:
        now = time.monotonic()
        if now < self.next_check:
            return False
        self.next_check = now + self.every_s
        return usage_over(self.folder, self.max_bytes, self.max_entries)


def usage_over(folder: Path, max_bytes: int, max_entries: int) -> bool:
    """True when ``folder`` holds more than ``max_bytes`` (allocated) or ``max_entries`` entries."""
    total = entries = 0
    stack = [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        return True
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if total > max_bytes:
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return False


class _ProcessWatchdog:
    """Counts the processes of the sandbox's PID namespace (through its own ``/proc``) where the kernel
    does not enforce RLIMIT_NPROC: for processes owned by host root it never does."""

    def __init__(self, bwrap_pid: int, limit: int) -> None:
        self.bwrap_pid, self.limit = bwrap_pid, limit + 3  # bwrap's init and monitor, the interpreter
        self.root: str | None = None
        self.host_root = _identity("/")

    def over(self) -> bool:
        if self.root is None:
            try:
                children = Path(f"/proc/{self.bwrap_pid}/task/{self.bwrap_pid}/children").read_text().split()
            except OSError:
                return False
            if not children:
                return False
            self.root = f"/proc/{children[0]}/root"
        try:
            # While bwrap is still setting up, its child's root is the host's, and so is "its" /proc:
            # counting there would count every process on the machine (a busy machine was enough to
            # kill sympy as over the limit). Count only once the child stands in its own root.
            if _identity(self.root) == self.host_root:
                return False
            return sum(1 for name in os.listdir(f"{self.root}/proc") if name.isdigit()) > self.limit
        except OSError:
            return False


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def probe(bwrap: str) -> tuple[str, str | None]:
    """(version, None) when a sandboxed interpreter really starts under ``bwrap``, else ("", why)."""
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return "", f"cannot start: {exc}"
    with held_folder(PRIVATE_PREFIX) as tmp:
        work = tmp / "work"
        work.mkdir()
        box = tmp / "box"
        job = Job(ENTER, work)
        _write_box(box, job, {})
        argv = [
            *bwrap_argv(bwrap, work, box, base_env(work, "/tmp"), Limits()),
            "--",
            sys.executable,
            "-I",
            "-B",
            "-c",
            "import os; print(os.getuid())",
        ]
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
        except (OSError, subprocess.SubprocessError) as exc:
            return "", f"probe failed: {exc}"
    if r.returncode != 0 or r.stdout.strip() != str(UID):
        return "", f"probe failed (exit {r.returncode}): {(r.stderr or r.stdout).strip()[-300:]}"
    return version, None


# Which backend: the first candidate a real sandboxed interpreter starts under (``probe``).
_lock = threading.Lock()
_cache: dict[str, tuple[Backend | None, str]] = {}


def find_backend() -> tuple[Backend | None, str]:
    """The first working backend, or ``None`` and why there is none (cached per ``CHAINMARK_BWRAP``)."""
    from store.settings import current

    override = current().bwrap
    key = "\0" if override is None else override
    with _lock:
        if key in _cache:
            return _cache[key]
        reasons = []
        found: tuple[Backend | None, str] | None = None
        for path in candidates():
            version, problem = probe(path)
            if problem is None:
                found = (Backend(path, version), "")
                break
            reasons.append(f"{path}: {problem}")
        if found is None:
            why = "; ".join(reasons) if reasons else "bubblewrap (bwrap) was not found"
            found = (None, why)
        _cache[key] = found
        return found


def forget() -> None:
    """Drop the cached probe (tests that change ``CHAINMARK_BWRAP``)."""
    with _lock:
        _cache.clear()
