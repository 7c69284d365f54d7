"""``chainmark score`` reads and writes through SQLAlchemy Core only (store/core_tables.py): the
command never imports SQLModel, the ORM or the table classes, which were a fifth of its start-up."""

from __future__ import annotations

import json
import subprocess
import sys

from store import make_engine
from store.migrate import upgrade
from tests.support.scoring_runs import write_run

SCORE = """
import json, sys
from click.testing import CliRunner
from tui.cli import cli
out = CliRunner().invoke(cli, sys.argv[1:], catch_exceptions=False).output
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "sqlmodel" or m in {"sqlalchemy.orm", "store.models"})
print(json.dumps({"output": out, "loaded": loaded}))
"""


def test_score_writes_its_rows_without_building_the_orm(tmp_path) -> None:
    db = tmp_path / "cm.db"
    engine = make_engine(db)
    upgrade(engine)
    run_id = write_run(engine, "agentic-mme", 20)
    engine.dispose()
    args = ["--db", str(db), "score", str(run_id), "--embedder", "hashing", "--json"]
    proc = subprocess.run([sys.executable, "-c", SCORE, *args], capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    result = json.loads(got["output"])
    assert result["metrics"]["total_cases"] == 20 and result["checkpoint_results_written"] == 60
    assert got["loaded"] == []
