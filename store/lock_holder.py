"""Who holds a SQLite database's write lock, so "database is locked" can name the process to wait for.

SQLite locks with POSIX record locks, and ``F_GETLK`` tells which process holds a conflicting one: in
WAL mode (chainmark's) the writer holds byte 120 of the ``-shm`` file (the WAL write lock); in
rollback-journal mode the RESERVED byte of the database file itself. Linux only (the ``struct flock``
layout is the platform's); elsewhere, on another host (a network file system) or when the lock is
gone by the time we ask, the holder is unknown and None is said.

Asking opens and closes the file, and closing any descriptor of a file drops every POSIX lock this
process holds on it: ask only after this process's own use of the database has failed.
"""

from __future__ import annotations

import fcntl
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from store.urls import without_password

_WAL_WRITE_LOCK = 120  # the first of the -shm file's lock bytes (WAL_WRITE_LOCK)
_RESERVED_BYTE = 0x40000001  # PENDING_BYTE + 1, on the database file (rollback-journal mode)
_FLOCK = "hhqqixxxx"  # Linux struct flock: l_type, l_whence, l_start, l_len, l_pid (padded to 32 bytes)
_SHOWN = 100  # characters of the holder's command line shown


@dataclass(frozen=True)
class LockHolder:
    pid: int
    command: str  # its command line, passwords masked, shortened
    is_chainmark: bool = False

    def describe(self) -> str:
        """``another chainmark (pid 12: chainmark run 3)``, or ``another process (…)`` for anything else."""
        what = "another chainmark" if self.is_chainmark else "another process"
        return f"{what} (pid {self.pid}: {self.command})" if self.command else f"{what} (pid {self.pid})"


def write_lock_holder(db: Path) -> LockHolder | None:
    """The process on this machine holding ``db``'s write lock, or None when none (or it cannot be told)."""
    if not sys.platform.startswith("linux"):
        return None
    for file, offset in ((db.with_name(db.name + "-shm"), _WAL_WRITE_LOCK), (db, _RESERVED_BYTE)):
        pid = _holder_of(file, offset)
        if pid is not None:
            args = _args_of(pid)
            return LockHolder(pid, _shown(args), _runs_chainmark(args))
    return None


def _holder_of(file: Path, offset: int) -> int | None:
    try:
        fd = os.open(file, os.O_RDONLY)
    except OSError:
        return None
    try:
        asked = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
        l_type, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, asked))
    except OSError:
        return None
    finally:
        os.close(fd)
    return pid if l_type != fcntl.F_UNLCK and pid > 0 else None


def _args_of(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _runs_chainmark(args: list[str]) -> bool:
    """The ``chainmark`` script, ``python -m tui`` or code importing ``tui.cli``."""
    return any(os.path.basename(a) == "chainmark" or "tui.cli" in a for a in args) or any(
        a == "-m" and b == "tui" for a, b in zip(args, args[1:])
    )


def _shown(args: list[str]) -> str:
    """The command line as one shortened line, programs by their names, passwords in URLs masked."""
    args = [os.path.basename(a) if i == 0 or a.endswith("/chainmark") else a for i, a in enumerate(args)]
    text = without_password(" ".join(" ".join(args).split()))  # one line: `python -c` code has newlines
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
