"""bench/startup_probe.py sees a command's first own statement whichever way it reaches the database:
a listing through ``sqlite3`` (its trace callback), any other command through SQLAlchemy (the listener
put on ``Engine`` when the command imports it); the opening (PRAGMAs, BEGIN, the schema check) is not
counted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.template_db import copy_sqlite_template

PROBE = Path(__file__).resolve().parents[2] / "bench" / "startup_probe.py"


def _first_statement(tmp_path: Path, *args: str) -> str:
    figures = tmp_path / "figures"
    env = {**os.environ, "PYTHONPATH": str(PROBE.parents[1])}
    subprocess.run([sys.executable, str(PROBE), str(figures), *args], env=env, check=True, capture_output=True)
    cpu, wall, statement = figures.read_text(encoding="utf-8").split(" ", 2)
    assert float(cpu) > 0 and float(wall) > 0
    return statement


@pytest.mark.parametrize(
    ("command", "statement"),
    [
        (["benchmarks", "list"], "SELECT task.benchmark_id, task.status, count(*) FROM task"),  # sqlite3
        (["endpoints", "list"], "SELECT modelendpoint.id, modelendpoint.name"),  # SQLAlchemy
    ],
)
def test_the_probe_notes_the_first_own_statement(tmp_path: Path, command: list[str], statement: str) -> None:
    db = tmp_path / "cm.db"
    copy_sqlite_template(db)
    assert _first_statement(tmp_path, "--db", str(db), *command).startswith(statement)
