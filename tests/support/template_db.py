"""A SQLite database at the newest schema, built by Alembic once per test process and copied into
each test's path: the tests get exactly what ``upgrade`` writes, without paying for it every time."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

from store import make_engine
from store.migrate import upgrade

_template: bytes | None = None


def sqlite_template() -> bytes:
    """The bytes of a database upgraded to head (one file: the WAL is checkpointed into it)."""
    global _template
    if _template is None:
        with tempfile.TemporaryDirectory(prefix="chainmark-template-") as folder:
            path = Path(folder) / "head.db"
            eng = make_engine(path)
            upgrade(eng)
            eng.dispose()
            with sqlite3.connect(path) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            _template = path.read_bytes()
    return _template


def copy_sqlite_template(path: Path) -> bool:
    """Write the head-schema database at ``path`` with the modes ``make_engine`` gives a new file
    (0600, its folder 0700); False, and nothing written, when a file is already there."""
    data = sqlite_template()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return True
