"""Helpers for the formats tests: row counts (to prove nothing half-written) and event views."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, select, col

from store.models import ALL_TABLES, Event, Trajectory


def row_counts(engine: Engine) -> dict[str, int]:
    with Session(engine) as s:
        return {t.__tablename__: s.exec(select(sa.func.count()).select_from(t)).one() for t in ALL_TABLES}


def run_events(engine: Engine, run_id: int) -> dict[int, list[tuple[str, dict[str, Any], bool]]]:
    """task id -> [(kind, payload, failed)] in order."""
    with Session(engine) as s:
        out: dict[int, list[tuple[str, dict[str, Any], bool]]] = {}
        for traj in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all():
            events = s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all()
            out[traj.task_id] = [(e.kind, e.payload, e.failed) for e in events]
        return out


@pytest.fixture
def counts(engine: Engine):
    return lambda: row_counts(engine)


# The store suite's database fixtures (SQLite, and PostgreSQL when its binaries are installed), so
# import paths that differ per dialect are tested on both.
from tests.store.conftest import any_engine, any_url  # noqa: E402,F401


def end_other_threads() -> None:
    """Import forks (its blob writers, its read-ahead child) only from a single-threaded process: an
    image test run earlier in this worker may have left the background encode pool's threads, so
    they are ended first; any other thread left is named (the test would silently not fork)."""
    import threading

    from evaluation.tools.images import close_encode_pool

    close_encode_pool()
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    assert not others, f"threads left by earlier tests keep the import from forking: {others}"
