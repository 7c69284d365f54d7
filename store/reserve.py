"""A little disk space set aside beside a SQLite database while a run writes to it.

When the disk fills mid-run the run must still record that it failed and why; but with the disk full
that last write fails too, and the run would stay ``running`` forever. So a run holds a small
allocated file next to the database and deletes it before writing its final status: the space it
frees is what that write (and SQLite's checkpoint) needs. PostgreSQL servers manage their own disk:
no reserve there. Reserves are named ``<db>.reserve-<pid>-<n>``; ``chainmark gc`` removes those of
dead processes.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

from sqlalchemy.engine import Engine

from store.db import sqlite_path

RESERVE_BYTES = 2 * 1024 * 1024
_SEQ = itertools.count()


class SpaceReserve:
    def __init__(self, path: Path | None):
        self.path = path

    @classmethod
    def beside(cls, engine: Engine, size: int = RESERVE_BYTES) -> SpaceReserve:
        """Allocate the reserve beside the engine's SQLite file; an empty reserve when the database
        is not a SQLite file or the space is not there (the run goes on without one)."""
        db = sqlite_path(str(engine.url))
        if db is None:
            return cls(None)
        path = db.with_name(f"{db.name}.reserve-{os.getpid()}-{next(_SEQ)}")  # one per run, even in one process
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except OSError:
            return cls(None)
        try:
            try:
                os.posix_fallocate(fd, 0, size)  # real blocks, not a sparse promise
            except (AttributeError, OSError):
                os.write(fd, b"\0" * size)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()
            return cls(None)
        os.close(fd)
        return cls(path)

    def release(self) -> None:
        """Give the space back (idempotent)."""
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self.path = None


def stale_reserves(db: Path) -> list[Path]:
    """Reserves beside ``db`` whose process is gone (killed runs)."""
    out = []
    for path in db.parent.glob(f"{db.name}.reserve-*"):
        pid = path.name.rsplit(".reserve-", 1)[-1].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            out.append(path)
    return sorted(out)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
