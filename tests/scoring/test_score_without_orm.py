"""``chainmark score`` reads and writes through SQLAlchemy Core only (store/core_tables.py): the
command never imports SQLModel, the ORM or the table classes, which were a fifth of its start-up; and
pydantic (the ``ScoreResult`` models, ≈ 0.08 s) loads when the profile builds the result, after the
command's first own statement."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from store import make_engine
from store.migrate import upgrade
from tests.support.scoring_runs import write_run

SCORE = """
import json, sqlite3, sys
from click.testing import CliRunner
from tui.cli import cli
first = []  # modules loaded when the command sends its first statement on the run's tables
connect = sqlite3.dbapi2.connect
def traced(*args, **kwargs):
    conn = connect(*args, **kwargs)
    def seen(sql):
        if not first and "FROM run" in sql:
            first.append(sorted(m for m in sys.modules if m.split(".")[0] == "pydantic"))
    conn.set_trace_callback(seen)
    return conn
sqlite3.dbapi2.connect = traced
out = CliRunner().invoke(cli, sys.argv[1:], catch_exceptions=False).output
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "sqlmodel" or m in {"sqlalchemy.orm", "store.models"})
print(json.dumps({"output": out, "loaded": loaded, "first": first}))
"""


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ``score --json`` of a 20-trajectory Agentic-MME run, in a fresh interpreter."""
    db = tmp_path_factory.mktemp("score") / "cm.db"
    engine = make_engine(db)
    upgrade(engine)
    run_id = write_run(engine, "agentic-mme", 20)
    engine.dispose()
    args = ["--db", str(db), "score", str(run_id), "--embedder", "hashing", "--json"]
    proc = subprocess.run([sys.executable, "-c", SCORE, *args], capture_output=True, text=True, check=True)
    got: dict[str, Any] = json.loads(proc.stdout)
    return got


def test_score_writes_its_rows_without_building_the_orm(scored: dict[str, Any]) -> None:
    result = json.loads(scored["output"])
    assert result["metrics"]["total_cases"] == 20 and result["checkpoint_results_written"] == 60
    assert scored["loaded"] == []


def test_score_reads_the_run_before_loading_pydantic(scored: dict[str, Any]) -> None:
    assert scored["first"] == [[]]  # the run's row was read, and no pydantic module was loaded by then
    assert json.loads(scored["output"])["schema_version"] == 1  # the result was still built and printed
