"""Migration 0010: the audited tables are rebuilt with AUTOINCREMENT on SQLite, keeping every row and
id, and their counters start above every id the audit trail ever named (a row deleted before the
migration does not hand its id to the next one)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store import make_engine
from store.migrate import head_revision, upgrade

TASK = (
    "INSERT INTO task (benchmark_id, source_id, query, answer_spec, status, revision, tools_offered, meta, "
    "created_at, updated_at) VALUES (1, ?, 'q', '{}', 'draft', 1, '[]', '{}', '2025-01-01', '2025-01-01')"
)


def test_upgrade_keeps_rows_and_never_reuses_a_deleted_id(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    engine = make_engine(path)
    upgrade(engine, "0009_judge_claims")
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO benchmark (name, source_format, settings, created_at) VALUES ('b', 'gta', '{}', '2025')"
        )
        for source_id in ("1", "2", "3"):
            db.execute(TASK, (source_id,))
        db.execute("DELETE FROM task WHERE id = 3")  # the highest id, deleted before the migration
        db.execute(
            "INSERT INTO auditevent (actor, action, entity, entity_id, created_at) "
            "VALUES ('x', 'delete', 'task', 3, '2025')"
        )
    db.close()
    assert upgrade(engine) == head_revision(engine)
    engine.dispose()
    with sqlite3.connect(path) as db:
        schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'task'").fetchone()[0]
        assert "AUTOINCREMENT" in schema
        assert db.execute("SELECT id, source_id FROM task ORDER BY id").fetchall() == [(1, "1"), (2, "2")]
        db.execute(TASK, ("4",))
        assert db.execute("SELECT max(id) FROM task").fetchone()[0] == 4  # not 3 again
        db.execute("DELETE FROM task WHERE id = 4")
        db.execute(TASK, ("5",))
        assert db.execute("SELECT max(id) FROM task").fetchone()[0] == 5
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    db.close()
