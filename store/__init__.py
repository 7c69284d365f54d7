"""Persistence only: tables, engine factory, migrations, blob store and plain-object queries.

Knows nothing of Textual, models or tools. Importing it imports nothing heavy: the engine helpers
load on first use, and the tables (``store.models``, which registers the audit hooks as it loads)
only when something asks for them. The listings' queries are plain SQL (``store.sql``), so on a
SQLite file they read through ``sqlite3`` (``store.sqlite_read``) without SQLAlchemy at all
(bench/bench_startup.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.db import make_engine, read_only, read_scope, resolve_url, session_scope

__all__ = ["make_engine", "read_only", "read_scope", "resolve_url", "session_scope"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    value = getattr(importlib.import_module("store.db"), name)
    globals()[name] = value
    return value
