"""The system-call filter every sandbox runs under, in the spirit of Docker's default profile: calls
that reach the kernel's keyrings, other processes' memory, BPF, performance counters, mounts and
namespaces, module and kexec loading, io_uring and a few more fail with EPERM.

Compiled with libseccomp through its ctypes binding ``pyseccomp`` (no hand-written BPF) and handed
to bubblewrap as ``--seccomp FD``; bubblewrap sets ``no_new_privs`` and loads it just before it
starts the code. The filter is for this machine's native ABI; libseccomp kills a process that
switches to another (32-bit calls from a 64-bit process).
"""

from __future__ import annotations

import errno
import os
import tempfile
from functools import lru_cache

DENIED = (
    # keyrings: the host user's keys (an API key kept with ``keyctl``)
    "keyctl",
    "add_key",
    "request_key",
    # other processes, the kernel's insides
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "lookup_dcookie",
    "syslog",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
    # mounts and namespaces
    "mount",
    "umount2",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    # kernel code, the machine, the clock
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "personality",
    "uselib",
    "vhangup",
    "_sysctl",
    "nfsservctl",
    # io_uring: a second way into most of the above
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME exists only for clone3/unshare)
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
TIOCSTI = 0x5412  # push characters into the terminal's input (bubblewrap's --new-session also stops it)


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is not installed here."""


@lru_cache(maxsize=1)
def compiled_filter() -> bytes:
    """The filter as a BPF program for ``bwrap --seccomp``; raises :class:`SeccompUnavailable`."""
    try:
        import pyseccomp as sc  # type: ignore[import-untyped]

        flt = sc.SyscallFilter(sc.ALLOW)
    except Exception as exc:  # no binding, or no libseccomp.so.2 under it
        raise SeccompUnavailable(f"libseccomp is not usable here ({exc})") from None
    deny = sc.ERRNO(errno.EPERM)
    arch = sc.system_arch()
    for name in DENIED:
        if _exists(sc, arch, name):
            flt.add_rule(deny, name)
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for flag in CLONE_NEW_FLAGS:
        flt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    flt.add_rule(deny, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
    with tempfile.TemporaryFile() as fh:
        flt.export_bpf(fh)
        fh.seek(0)
        return fh.read()


def _exists(sc: object, arch: int, name: str) -> bool:
    try:
        return int(sc.resolve_syscall(arch, name)) >= 0  # type: ignore[attr-defined]
    except Exception:
        return False


def filter_fd() -> int:
    """A readable pipe holding the compiled filter (the caller passes it on and closes it)."""
    program = compiled_filter()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)  # a few kB: fits the pipe's buffer
    finally:
        os.close(write_end)
    return read_end
