"""Lists at lab scale list without "too many SQL variables", with a default limit that says how many
more there are; ``runs show`` pages its trajectories the same way. The connections get SQLite's old
limit of 999 variables (builds before 3.32; stock builds now allow 32,766), so 3,000 tasks cross it
three times over: the same failure as 40,000 tasks on a stock build, at a fraction of the set-up."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from store import make_engine
from store.migrate import upgrade
from store.models import Benchmark, ModelEndpoint, Run, ReferenceStep, Task, Trajectory
from tui.cli import cli

N_TASKS = 3_000
VARIABLE_LIMIT = 999  # SQLITE_MAX_VARIABLE_NUMBER of builds before 3.32


@pytest.fixture
def standard_sqlite_limit(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every SQLite connection gets the old parameter limit, whatever this Python was built with: the
    engine's (SQLAlchemy opens them through ``sqlite3.dbapi2``) and the listings' plain ones."""
    made: list[sqlite3.Connection] = []

    def limited(connect):  # type: ignore[no-untyped-def]
        def open_limited(*args, **kwargs):  # type: ignore[no-untyped-def]
            conn = connect(*args, **kwargs)
            conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, VARIABLE_LIMIT)
            made.append(conn)
            return conn

        return open_limited

    monkeypatch.setattr(sqlite3, "connect", limited(sqlite3.connect))
    monkeypatch.setattr(sqlite3.dbapi2, "connect", limited(sqlite3.dbapi2.connect))
    yield
    assert made, "no SQLite connection was opened under the limit"


def rows(model, items):  # type: ignore[no-untyped-def]
    """Column values with the model's defaults filled in, for a Core bulk insert."""
    return [{k: v for k, v in model(**kw).model_dump().items() if v is not None or k not in ("id",)} for kw in items]


@pytest.fixture(scope="module")
def big_db(tmp_path_factory) -> Path:
    """3k tasks (every 1000th with a reference step) and a run over all of them, bulk-inserted."""
    db = tmp_path_factory.mktemp("big") / "big.db"
    engine = make_engine(db)
    upgrade(engine)
    with engine.begin() as c:
        bench_id = c.execute(
            sa.insert(Benchmark.__table__), rows(Benchmark, [dict(name="big", source_format="chainmark")])
        ).inserted_primary_key[0]
        c.execute(
            sa.insert(Task.__table__),
            rows(
                Task,
                [
                    {
                        "benchmark_id": bench_id,
                        "source_id": f"t{i:05d}",
                        "query": f"Question number {i}?",
                        "answer_spec": {"kind": "exact", "value": str(i)},
                    }
                    for i in range(N_TASKS)
                ],
            ),
        )
        ids = [r[0] for r in c.execute(sa.select(Task.id).order_by(Task.id))]
        c.execute(
            sa.insert(ReferenceStep.__table__),
            rows(
                ReferenceStep,
                [
                    {"task_id": tid, "ordinal": 1, "thought": "t", "tool_name": "OCR", "tool_args": {}}
                    for tid in ids[::1000]
                ],
            ),
        )
        ep = c.execute(
            sa.insert(ModelEndpoint.__table__),
            rows(ModelEndpoint, [dict(name="ep", base_url="http://127.0.0.1:9/v1", model="m")]),
        ).inserted_primary_key[0]
        run_id = c.execute(
            sa.insert(Run.__table__),
            rows(
                Run,
                [
                    dict(
                        benchmark_id=bench_id, endpoint_id=ep, kind="model", mode="atomic", concurrency=4, status="done"
                    )
                ],
            ),
        ).inserted_primary_key[0]
        c.execute(
            sa.insert(Trajectory.__table__),
            rows(
                Trajectory,
                [
                    {
                        "run_id": run_id,
                        "task_id": tid,
                        "task_revision": 1,
                        "status": "done",
                        "final_answer": str(i),
                        "usage": {"total_tokens": 2},
                    }
                    for i, tid in enumerate(ids)
                ],
            ),
        )
    engine.dispose()
    return db


def run(db: Path, *args: str):
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_tasks_list_defaults_to_200_and_says_how_many_more(big_db, standard_sqlite_limit):
    out = run(big_db, "tasks", "list").output.splitlines()
    assert out[0].split()[:4] == ["id", "benchmark", "source", "status"]
    rows = out[2:-1]
    assert len(rows) == 200 and rows[0].split()[2] == "t00000" and rows[-1].split()[2] == "t00199"
    assert out[-1] == f"… {N_TASKS - 200} more tasks not shown (use --limit N or --all)"


def test_tasks_list_all_above_the_sqlite_parameter_limit(big_db, standard_sqlite_limit):
    out = run(big_db, "tasks", "list", "--all").output.splitlines()
    rows = out[2:]
    assert len(rows) == N_TASKS and rows[-1].split()[2] == f"t{N_TASKS - 1:05d}"
    assert not any("more tasks" in line for line in out)
    steps = [int(r.split()[6]) for r in rows]  # every 1000th task has a reference step
    assert sum(steps) == N_TASKS // 1000 and steps[0] == 1 and steps[1000] == 1 and steps[1] == 0


def test_tasks_list_json_limit_and_all(big_db, standard_sqlite_limit):
    result = CliRunner().invoke(cli, ["--db", str(big_db), "tasks", "list", "--json", "--limit", "5"])
    assert result.exit_code == 0
    assert [t["source_id"] for t in json.loads(result.stdout)] == [f"t{i:05d}" for i in range(5)]
    assert f"{N_TASKS - 5} more tasks" in result.stderr
    every = json.loads(run(big_db, "tasks", "list", "--json", "--all").stdout)
    assert len(every) == N_TASKS and every[-1]["answer_kind"] == "exact"


def test_runs_show_pages_its_trajectories(big_db, standard_sqlite_limit):
    out = run(big_db, "runs", "show", "1").output.splitlines()
    assert f"done {N_TASKS}" in out[2] and f"tokens {2 * N_TASKS}" in out[2]
    header = next(i for i, line in enumerate(out) if line.startswith("task"))
    rows = out[header + 2 : -1]
    assert len(rows) == 200 and rows[0].split()[-1] == "0" and rows[-1].split()[-1] == "199"
    assert out[-1] == f"… {N_TASKS - 200} more trajectories not shown (use --offset 200, --limit N or --all)"
    page = json.loads(run(big_db, "runs", "show", "1", "--json", "--offset", str(N_TASKS - 10), "--limit", "50").stdout)
    assert [t["final_answer"] for t in page["trajectories"]] == [str(i) for i in range(N_TASKS - 10, N_TASKS)]
    assert page["trajectories_total"] == N_TASKS and page["tokens"] == 2 * N_TASKS
    every = run(big_db, "runs", "show", "1", "--all").output.splitlines()
    assert len(every) - header - 2 == N_TASKS
