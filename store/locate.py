"""Where the database is and how long a SQLite writer waits: read from the settings, without
SQLAlchemy, so a listing that opens SQLite through ``sqlite3`` (``store.sqlite_read``) finds it as the
engine does (``store.db`` re-exports these)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "chainmark.db"
ENV_DB = "CHAINMARK_DB"
BUSY_TIMEOUT_MS = 30_000
ENV_BUSY_TIMEOUT = "CHAINMARK_BUSY_TIMEOUT_MS"


def busy_timeout_ms() -> int:
    """How long a SQLite writer waits for another's lock before giving up: ``CHAINMARK_BUSY_TIMEOUT_MS``
    or 30 s. A bad value is an error, not a silent default."""
    from store.settings import current

    return current().busy_timeout_ms


def resolve_url(db: str | os.PathLike[str] | None = None) -> str:
    """Turn a CLI/env value (a path or a URL) into an SQLAlchemy URL."""
    from store.settings import current

    value = str(db) if db else current().db
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


def plain_sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///path`` URL that names a file plainly (no query, no escapes, not
    memory); None for anything else, which only the engine reads (``store.db.sqlite_path``)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return None
    path = url[len(prefix) :]
    if not path or path == ":memory:" or any(c in path for c in "?%#"):
        return None
    return Path(path)
