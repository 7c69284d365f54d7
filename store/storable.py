"""What a database can store, and which errors mean it refused a write.

Model replies are untrusted text: a lone surrogate (``"\\ud800"`` in the reply's JSON) cannot be
encoded as UTF-8 for any backend, PostgreSQL refuses NUL in text and JSON, and a parser bug can put
a Python ``set`` into a payload. ``storable`` returns a copy that every backend accepts, with such
characters written as visible escapes (the six characters ``\\ud800``), plus notes saying what was
changed, so the caller can record that the stored text differs from what was received.

``write_failure`` tells "the database cannot take writes now" (disk full, read-only, lock held past
the busy timeout, connection gone) from "this row is bad": the first stops a run, the second is
handled per row.
"""

from __future__ import annotations

import errno
import math
import re
from typing import Any

import sqlalchemy.exc as sa_exc

_SURROGATE = re.compile("[\ud800-\udfff]")
_NUL = "\x00"
_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO, errno.EFBIG})
MAX_DEPTH = 200  # deeper structures are cut (and noted): PostgreSQL and json both have depth limits


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


class _Escaper:
    def __init__(self, nul: bool):
        self.nul = nul
        self.notes: set[str] = set()

    def text(self, s: str) -> str:
        if _SURROGATE.search(s):
            s = _SURROGATE.sub(_escape, s)
            self.notes.add("lone surrogate escaped")
        if self.nul and _NUL in s:
            s = s.replace(_NUL, "\\u0000")
            self.notes.add("NUL escaped")
        return s

    def value(self, v: Any, depth: int = 0) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if v is None or isinstance(v, (bool, int)):
            return v
        if isinstance(v, float):
            if math.isfinite(v):
                return v
            self.notes.add("non-finite number stored as text")
            return str(v)
        if depth >= MAX_DEPTH:
            self.notes.add(f"nesting deeper than {MAX_DEPTH} cut")
            return self.text(repr(v)[:200])
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                if not isinstance(k, str):
                    self.notes.add(f"{type(k).__name__} key stored as text")
                    k = str(k)
                out[self.text(k)] = self.value(item, depth + 1)
            return out
        if isinstance(v, (list, tuple)):
            return [self.value(item, depth + 1) for item in v]
        if isinstance(v, (set, frozenset)):
            self.notes.add(f"{type(v).__name__} stored as a list")
            return [self.value(item, depth + 1) for item in sorted(v, key=repr)]
        self.notes.add(f"{type(v).__name__} stored as text")
        return self.text(str(v))


def storable(value: Any, *, nul: bool = True) -> tuple[Any, list[str]]:
    """``value`` with every string, key and container made storable in any backend (``nul``: also
    escape NUL, which only PostgreSQL refuses); returns the copy and what was changed."""
    esc = _Escaper(nul)
    out = esc.value(value)
    return out, sorted(esc.notes)


def write_failure(exc: BaseException) -> bool:
    """True when ``exc`` says the store cannot take writes at all (as opposed to a bad row)."""
    if isinstance(exc, OSError):  # blob files on a full, read-only or failing disk
        return exc.errno in _DISK_ERRNOS
    if isinstance(exc, sa_exc.OperationalError):  # SQLite full/readonly/locked/I-O; PG disk full, gone
        # … except PostgreSQL's deadlocks and serialization failures (SQLSTATE 40…): those pass on retry
        return not str(getattr(getattr(exc, "orig", None), "sqlstate", "") or "").startswith("40")
    if isinstance(exc, sa_exc.InternalError):  # PostgreSQL: read-only transaction (SQLSTATE 25006)
        return getattr(getattr(exc, "orig", None), "sqlstate", "") in ("25006",)
    return isinstance(exc, sa_exc.DBAPIError) and bool(getattr(exc, "connection_invalidated", False))


def one_line(exc: BaseException) -> str:
    """The driver's own message of a database error, without SQLAlchemy's SQL dump and links."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first
