"""Twenty annotators at once on one PostgreSQL database (issue 19, team annotation): ratings and task
edits from separate processes, edits checked against the value they started from. Nothing acknowledged
is lost, no update is made on a stale read, and nobody sees an error (conflicts are retried, as the
editor's conflict prompt lets a person do). The minute-long version is ``bench/bench_team.py``."""

from __future__ import annotations

import pytest

from bench.bench_team import run

pytestmark = pytest.mark.postgres


def test_twenty_annotators_lose_nothing(pg_cluster) -> None:  # type: ignore[no-untyped-def]
    # Each person makes at least 12 saves however busy the machine is (their action mix is seeded), and
    # keeps going for a second when it is fast, so the counts below never depend on timing.
    figures = run(pg_cluster.new_database(), people=20, seconds=1.0, min_ops=12)
    assert figures["errors"] == []
    assert figures["lost_writes"] == []
    assert figures["ratings"] > 20 and figures["edits"] > 20 and figures["conflicts_retried"] >= 0
    assert figures["p95_ms"] is not None
