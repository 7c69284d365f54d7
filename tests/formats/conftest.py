"""Helpers for the formats tests: row counts (to prove nothing half-written) and event views."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from store.models import ALL_TABLES, Event, Trajectory


def row_counts(engine: Engine) -> dict[str, int]:
    with Session(engine) as s:
        return {t.__tablename__: s.exec(select(sa.func.count()).select_from(t)).one() for t in ALL_TABLES}


def run_events(engine: Engine, run_id: int) -> dict[int, list[tuple[str, dict[str, Any], bool]]]:
    """task id -> [(kind, payload, failed)] in order."""
    with Session(engine) as s:
        out: dict[int, list[tuple[str, dict[str, Any], bool]]] = {}
        for traj in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all():
            events = s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(Event.ordinal)).all()
            out[traj.task_id] = [(e.kind, e.payload, e.failed) for e in events]
        return out


@pytest.fixture
def counts(engine: Engine):
    return lambda: row_counts(engine)


# The store suite's database fixtures (SQLite, and PostgreSQL when its binaries are installed), so
# import paths that differ per dialect are tested on both.
from tests.store.conftest import any_engine, any_url, pg_cluster  # noqa: E402,F401
