"""Errors that end a CLI command: one clear line on the terminal, the traceback in a log file.

A full disk, a read-only database, a lock held past the busy timeout, a value the database refuses,
input nested past Python's recursion limit: the user can act on each, and a traceback only hides
what to do. Known ones get a sentence saying what happened and what to do; anything else is still
an error (exit status 1) and says where its traceback went, so a bug is never swallowed.
``CHAINMARK_TRACEBACK=1`` prints tracebacks instead (for developers).
"""

from __future__ import annotations

import datetime
import errno
import os
import tempfile
import traceback
from pathlib import Path
from typing import Any

LOG_NAME = "chainmark-errors.log"
ENV_TRACEBACK = "CHAINMARK_TRACEBACK"

_FULL = "the disk holding the database is full; free some space, then run the command again"
_DISK_SYMPTOMS = ("readonly database", "disk i/o error", "unable to open database file", "database or disk is full")
"""What SQLite says when the disk holding the database is full: besides SQLITE_FULL, a failed -shm
index is an I/O error, and a database read on a full disk (opened immutable) refuses writes as read-only."""
_SQLITE = (  # substring of SQLite's message → what it means for the user
    ("database or disk is full", _FULL),
    (
        "readonly database",
        ("the database is read-only (file or folder permissions, or a read-only mount); use a writable copy"),
    ),
    (
        "database is locked",
        (
            "{holder} held the database's write lock longer than the busy timeout "
            "({timeout}); let it finish, or raise CHAINMARK_BUSY_TIMEOUT_MS"
        ),
    ),
    (
        "unable to open database file",
        ("the database file cannot be opened (missing folder, permissions, or a full or read-only disk)"),
    ),
    ("disk i/o error", "the disk failed a read or write of the database (full, removed or read-only)"),
)
_OS = {
    errno.ENOSPC: "no space left on the device",
    errno.EROFS: "the file system is read-only",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EIO: "the disk failed a read or write",
}


def describe(exc: BaseException, timeout_s: float | None = None, db_url: str | None = None) -> str | None:
    """One line for an error the user can act on, or None when it looks like a bug (``db_url``: the
    database, to tell a full disk and to name the process holding its write lock)."""
    import sqlalchemy.exc as sa_exc

    from store.sqlite_read import DRIVER_ERRORS
    from store.storable import one_line

    if getattr(type(exc), "expected", False):  # an error class whose message already says what to do
        return one_line(exc)
    # The driver's own errors too: the listings read SQLite through it directly (store.sqlite_read)
    if isinstance(exc, (sa_exc.OperationalError, sa_exc.InternalError, *DRIVER_ERRORS)):
        raw = one_line(exc)
        low = raw.lower()
        if any(n in low for n in _DISK_SYMPTOMS) and _disk_full(db_url):  # SQLite says "read-only" or "I/O"
            return f"{_FULL} ({raw})"
        for needle, meaning in _SQLITE:
            if needle in low:
                wait = f"{timeout_s:g} s" if timeout_s is not None else "the busy timeout"
                holder = _lock_holder(db_url) if "{holder}" in meaning else ""
                return f"{meaning.format(timeout=wait, holder=holder)} ({raw})"
        return f"the database refused the operation: {raw}"
    if isinstance(exc, sa_exc.DataError):
        return f"the database refused a value: {_value_message(one_line(exc))}"
    if isinstance(exc, sa_exc.StatementError) and isinstance(exc.orig, UnicodeError | OverflowError | TypeError):
        return describe(exc.orig, timeout_s, db_url)
    if isinstance(exc, OSError) and exc.errno in _OS:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{_OS[exc.errno]}{where} ({exc.strerror or exc})"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read (more levels than Python's recursion limit)"
    if isinstance(exc, OverflowError):
        return f"a number is too large: {exc}"
    if isinstance(exc, UnicodeError):
        return f"text the database cannot store (a lone surrogate or invalid character): {exc}"
    return None


def _disk_full(db_url: str | None) -> bool:
    """Is the disk holding the SQLite database ``db_url`` (nearly) full?"""
    from store.db import sqlite_path
    from store.sqlite_read import disk_nearly_full

    try:
        path = sqlite_path(db_url) if db_url else None
    except Exception:  # noqa: BLE001  (a malformed URL: not a disk question)
        return False
    return path is not None and disk_nearly_full(path)


def _lock_holder(db_url: str | None) -> str:
    """Who holds the write lock of the SQLite database ``db_url``: "another chainmark (pid …: command)",
    or "another process" when that cannot be told (a server database, another host, already gone)."""
    from store.db import sqlite_path
    from store.lock_holder import write_lock_holder

    try:
        path = sqlite_path(db_url) if db_url else None
        holder = write_lock_holder(path) if path is not None else None
    except Exception:  # noqa: BLE001  (naming the holder is a courtesy: never a second error)
        holder = None
    return holder.describe() if holder is not None else "another process"


def _value_message(raw: str) -> str:
    if "NUL" in raw or "0x00" in raw:
        return f"PostgreSQL cannot store the NUL character in text ({raw})"
    if "too long" in raw:
        return f"a value is longer than its column allows ({raw})"
    return raw


def log_traceback(exc: BaseException, db_url: str | None) -> Path | None:
    """Append the traceback to ``chainmark-errors.log`` beside the SQLite database (or in the temp
    folder for server databases, or when that disk is the one that is full); None if nowhere works."""
    text = "".join(traceback.format_exception(exc))
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for folder in _log_folders(db_url):
        path = folder / LOG_NAME
        existed = path.exists()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as f:
                f.write(f"--- {stamp} pid {os.getpid()}\n{text}\n")
            return path
        except OSError:  # a full disk: no empty log left there, the next folder is tried
            if not existed:
                _remove_quietly(path)
    return None


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _log_folders(db_url: str | None) -> list[Path]:
    folders = []
    if db_url:
        try:
            from store.db import sqlite_path

            path = sqlite_path(db_url)
            if path is not None:
                folders.append(path.parent)
        except Exception:  # noqa: BLE001,S110  (a malformed URL: the temp folder will do)
            pass
    folders.append(Path(tempfile.gettempdir()))
    return folders


def message_for(exc: BaseException, db_url: str | None, timeout_s: float | None = None) -> str:
    """The line the CLI prints for ``exc``, with where its traceback was written."""
    log = log_traceback(exc, db_url)
    where = f"traceback in {log}" if log else "the traceback could not be written anywhere"
    known = describe(exc, timeout_s, db_url)
    if known is not None:
        return f"{known} [{where}]"
    return f"internal error, please report it: {type(exc).__name__}: {_first_line(exc)} [{where}]"


def _first_line(exc: Any) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
