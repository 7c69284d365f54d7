"""``chainmark import`` reads and writes through SQLAlchemy Core (store/core_tables.py): it reaches its
first own statement, and creates a dataset's tasks with their children, files and audit rows, without
importing SQLModel, the ORM or the table classes (a third of a second of its start-up). Only a
re-import that changes an existing task loads them, to update it through the audit hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from store import make_engine
from tests.formats.fixtures import write_gta
from tests.support.template_db import copy_sqlite_template

IMPORT = """
import gc, json, sqlite3, sys
from click.testing import CliRunner
from tui.cli import cli
ORM = lambda: sorted(m for m in sys.modules if m.split(".")[0] == "sqlmodel" or m in {"sqlalchemy.orm", "store.models"})
first = []  # the ORM modules loaded when the command sends its first statement on the benchmark table
walks = []  # collections from SQLAlchemy's import on to that statement
gc.callbacks.append(lambda phase, info: phase == "start" and "sqlalchemy" in sys.modules and not first and walks.append(1))
connect = sqlite3.dbapi2.connect
def traced(*args, **kwargs):
    conn = connect(*args, **kwargs)
    def seen(sql):
        if not first and "FROM benchmark" in sql:
            first.append(ORM())
    conn.set_trace_callback(seen)
    return conn
sqlite3.dbapi2.connect = traced
out = CliRunner().invoke(cli, sys.argv[1:], catch_exceptions=False).output
print(json.dumps({"output": out, "first": first, "loaded": ORM(), "walks": len(walks)}))
"""


def _import(db: Path, src: Path) -> dict[str, Any]:
    args = ["--db", str(db), "import", "gta", str(src), "--json"]
    proc = subprocess.run([sys.executable, "-c", IMPORT, *args], capture_output=True, text=True, check=True)
    got: dict[str, Any] = json.loads(proc.stdout)
    return got


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """A first import of 4 GTA tasks into a fresh database, in a fresh interpreter."""
    tmp = tmp_path_factory.mktemp("import")
    db = tmp / "cm.db"
    copy_sqlite_template(db)
    write_gta(tmp / "src", n=4)
    return db, tmp / "src", _import(db, tmp / "src")


def test_import_creates_its_tasks_without_building_the_orm(imported: tuple[Path, Path, dict[str, Any]]) -> None:
    db, _, got = imported
    summary = json.loads(got["output"])
    assert (summary["created"], summary["steps"]) == (4, 12)
    assert got["first"] == [[]]  # the benchmark was looked up before any ORM module was loaded
    assert got["walks"] == 0  # and no collection walked SQLAlchemy's and the format's new modules
    assert got["loaded"] == []  # and the tasks, steps, files and audit rows went in without one
    engine = make_engine(db)
    with engine.connect() as conn:
        audit = conn.execute(sa.text("SELECT entity, count(*) FROM auditevent GROUP BY entity ORDER BY entity")).all()
    engine.dispose()
    assert [tuple(r) for r in audit] == [("referencestep", 12), ("task", 4)]


def test_a_changed_task_is_updated_through_the_orm(imported: tuple[Path, Path, dict[str, Any]]) -> None:
    db, src, _ = imported
    data = json.loads((src / "dataset.json").read_text())
    data["1"]["dialogs"][0]["content"] = "A changed question?"
    (src / "dataset.json").write_text(json.dumps(data))
    got = _import(db, src)
    assert json.loads(got["output"])["updated"] == 1
    assert got["first"] == [[]]
    assert "store.models" in got["loaded"]  # loaded for the update, after the first statement
    engine = make_engine(db)
    with engine.connect() as conn:
        update = conn.execute(
            sa.text("SELECT actor, entity, entity_id FROM auditevent WHERE action = 'update' AND entity = 'task'")
        ).all()
    engine.dispose()
    assert len(update) == 1 and update[0][1:] == ("task", 2)


def test_a_refused_update_rolls_the_whole_import_back(any_engine, tmp_path: Path) -> None:
    """An update the store refuses (it would drop a scored checkpoint) is raised from inside the ORM
    session opened on the import's connection; the import's earlier writes (another task's update, new
    files) roll back with it, on SQLite and PostgreSQL."""
    from sqlmodel import Session, select

    from annotation.formats.api import import_dataset
    from store.blobs import TableBlobStore
    from store.models import Checkpoint, CheckpointResult, Run, Task, Trajectory
    from tests.formats.fixtures import png, write_mme

    blobs = TableBlobStore(any_engine)
    write_mme(tmp_path / "a", n=3)
    import_dataset(any_engine, blobs, "agentic-mme", tmp_path / "a", actor="importer")
    with Session(any_engine) as s:
        task = s.exec(select(Task).where(Task.source_id == "0002")).one()
        search = s.exec(select(Checkpoint).where(Checkpoint.task_id == task.id, Checkpoint.key == "S1_search")).one()
        run = Run(name="r", benchmark_id=task.benchmark_id, mode="atomic")
        s.add(run)
        s.flush()
        traj = Trajectory(run_id=run.id or 0, task_id=task.id or 0)
        s.add(traj)
        s.flush()
        s.add(CheckpointResult(trajectory_id=traj.id or 0, checkpoint_id=search.id or 0, passed=True))
        s.commit()

    def dump() -> list[tuple[Any, ...]]:
        with any_engine.connect() as conn:
            return [
                tuple(r)
                for t in ("task", "checkpoint", "auditevent", "asset", "blob")
                for r in conn.execute(sa.text(f"SELECT * FROM {t} ORDER BY 1"))
            ]

    before = dump()
    write_mme(tmp_path / "b", n=3)
    one = json.loads((tmp_path / "b/json/0001.json").read_text())
    one["input"]["prompt"] = "A changed prompt."  # updated first, then rolled back
    (tmp_path / "b/json/0001.json").write_text(json.dumps(one))
    two = json.loads((tmp_path / "b/json/0002.json").read_text())
    del two["process_evaluation"]["checkpoints"][1]
    two["process_evaluation"]["ordering_constraints"] = []
    (tmp_path / "b/json/0002.json").write_text(json.dumps(two))
    (tmp_path / "b/images/image_0000.png").write_bytes(png(99))  # a new file, stored then rolled back
    with pytest.raises(Exception, match="drops checkpoint 'S1_search', which has 1 scored result"):
        import_dataset(any_engine, blobs, "agentic-mme", tmp_path / "b", actor="importer")
    assert dump() == before
