"""The one clock every stored timestamp comes from, in a module of its own so code that writes rows
through SQLAlchemy Core (a run, the listings) need not load the SQLModel tables for it."""

from __future__ import annotations

from datetime import datetime, timezone


def utcnow() -> datetime:
    """Timestamps are always timezone-aware UTC."""
    return datetime.now(timezone.utc)
