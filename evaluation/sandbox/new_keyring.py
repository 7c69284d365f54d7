"""Runs on the host between chainmark and ``bwrap``: joins a new, empty, anonymous session keyring,
then becomes ``bwrap`` (``python new_keyring.py BWRAP ARGS...``).

A process keeps the session keyring it was started with, through every namespace: without this the
sandbox would possess the keys of the user who started chainmark (an API key kept with
``keyctl``). The sandbox's seccomp filter refuses the keyring calls as well; this keeps the keys
out of reach where no filter could be loaded. Standard library only, so it starts fast.
"""

import ctypes
import errno
import os
import platform
import sys

SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "ppc64le": 311, "s390x": 280, "i686": 288}
KEYCTL_JOIN_SESSION_KEYRING = 1


def join_new_session_keyring() -> str | None:
    """None when joined, or when there is nothing to inherit (a kernel without keyrings, a filter
    around chainmark that refuses keyctl); otherwise why not (the sandbox is then not started)."""
    number = SYS_KEYCTL.get(platform.machine())
    if number is None:
        return f"no keyctl system call number known for {platform.machine()}"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) >= 0:
        return None
    code = ctypes.get_errno()
    return None if code in (errno.ENOSYS, errno.EPERM) else os.strerror(code)


if __name__ == "__main__":
    problem = join_new_session_keyring()
    if problem:
        sys.stderr.write(f"sandbox not started: cannot join a new session keyring: {problem}\n")
        sys.exit(125)
    os.execv(sys.argv[1], sys.argv[1:])
