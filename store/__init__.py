"""Persistence only: tables, engine factory, migrations, blob store and plain-object queries.

Knows nothing of Textual, models or tools. Importing it registers the audit hooks.
"""

from store import audit as _audit  # noqa: F401  (registers the session hooks)
from store.db import make_engine, read_only, resolve_url, session_scope

__all__ = ["make_engine", "read_only", "resolve_url", "session_scope"]
