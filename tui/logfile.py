"""``chainmark --verbose``: a debug log in a file beside the database.

The TUI owns the terminal and scripts read stdout, so the log goes to a file that outlives the
command: ``chainmark.db.log`` next to ``chainmark.db`` (where the blobs folder also lives), or
``chainmark.log`` in the working directory for a PostgreSQL database. Modules log with
``logging.getLogger(__name__)``; without ``--verbose`` nothing is written anywhere but stderr
(Python's last-resort handler, warnings and errors only).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
# Libraries that log every request or byte at DEBUG (or their set-up at INFO): less is enough.
QUIET = {
    name: logging.INFO
    for name in (
        "aiohttp",
        "asyncio",
        "httpcore",
        "httpcore2",
        "httpx",
        "httpx2",
        "openai",
        "PIL",
        "matplotlib",
        "markdown_it",
        "urllib3",
    )
}
QUIET["alembic.runtime.plugins"] = logging.WARNING


def log_path(url: str) -> Path:
    """Where the log of the database at ``url`` goes."""
    from store.db import sqlite_path

    db_file = sqlite_path(url)
    if db_file is None:
        return Path(os.getcwd()) / "chainmark.log"
    return db_file.with_name(db_file.name + ".log")


def start(url: str) -> logging.Handler:
    """Send every record at DEBUG and above to the database's log file; returns the handler (see stop)."""
    path = log_path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    handler.previous_level = root.level  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for name, level in QUIET.items():
        logging.getLogger(name).setLevel(level)
    return handler


def stop(handler: logging.Handler) -> None:
    """Detach the handler (tests run many commands in one process) and close the file."""
    root = logging.getLogger()
    root.removeHandler(handler)
    root.setLevel(getattr(handler, "previous_level", logging.WARNING))
    handler.close()
