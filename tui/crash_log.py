"""Crash tracebacks in a file as well as on the terminal.

When the TUI dies, the traceback Textual prints is gone as soon as the terminal scrolls or the SSH
session closes. Each crash is appended, with the time and the screens that were open, to a log next
to the SQLite database (``chainmark-crash.log`` beside ``chainmark.db``), or in the user's state
folder for a server database.
"""

from __future__ import annotations

import os
import traceback
from datetime import UTC, datetime
from pathlib import Path


def crash_log_path(url: str) -> Path:
    """Where crashes of the TUI on database ``url`` are written."""
    from store.db import sqlite_path

    db = sqlite_path(url)
    if db is not None:
        return db.with_name(f"{db.stem}-crash.log")
    state = Path(os.environ.get("XDG_STATE_HOME") or "~/.local/state").expanduser()
    return state / "chainmark" / "crash.log"


def write_crash(path: Path, error: BaseException, screens: list[str]) -> Path:
    """Append one crash report to ``path`` and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    with path.open("a", encoding="utf-8") as out:
        out.write(f"=== chainmark crashed at {when}\nscreens: {' > '.join(screens) or '-'}\n{text}\n")
    return path
