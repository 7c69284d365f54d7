"""Twenty annotators at once on one PostgreSQL database (issue 19, team annotation): ratings and task
edits from separate processes, edits checked against the value they started from. Nothing acknowledged
is lost, no update is made on a stale read, and nobody sees an error (conflicts are retried, as the
editor's conflict prompt lets a person do). The minute-long version is ``bench/bench_team.py``."""

from __future__ import annotations

import pytest

from bench.bench_team import run

pytestmark = pytest.mark.postgres


def test_twenty_annotators_lose_nothing(pg_cluster) -> None:  # type: ignore[no-untyped-def]
    figures = run(pg_cluster.new_database(), people=20, seconds=3.0)
    assert figures["errors"] == []
    assert figures["lost_writes"] == []
    assert figures["ratings"] > 20 and figures["edits"] > 20
    assert figures["p95_ms"] is not None
