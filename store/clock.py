"""The one clock every stored timestamp comes from, in a module of its own so code that writes rows
through SQLAlchemy Core (a run, the listings) need not load the SQLModel tables for it."""

from __future__ import annotations

from datetime import datetime, timezone


def utcnow() -> datetime:
    """Timestamps are always timezone-aware UTC."""
    return datetime.now(timezone.utc)


def as_utc(value: datetime) -> datetime:
    """A stored timestamp as aware UTC: SQLite hands them back without their offset (they were written in UTC)."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
