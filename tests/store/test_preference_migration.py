"""0006_preferences: the table arrives on a database that already holds runs, keeps one judgement per
person, task and pair, and goes away again on downgrade (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.exc import IntegrityError

from store import make_engine
from store.migrate import alembic_config, current_revision, upgrade

ROWS = [
    "INSERT INTO benchmark (id, name, source_format, settings, created_at) VALUES (1, 'b', 'gta', '{}', '2026-01-01')",
    "INSERT INTO task (id, benchmark_id, source_id, query, answer_spec, status, revision, tools_offered, meta, "
    "created_at, updated_at) VALUES (7, 1, 's1', 'q?', '{}', 'draft', 1, '[]', '{}', '2026-01-01', '2026-01-01')",
    "INSERT INTO run (id, benchmark_id, kind, mode, budgets, concurrency, status, config, created_at) "
    "VALUES (1, 1, 'model', 'atomic', '{}', 1, 'done', '{}', '2026-01-01')",
    "INSERT INTO run (id, benchmark_id, kind, mode, budgets, concurrency, status, config, created_at) "
    "VALUES (2, 1, 'model', 'atomic', '{}', 1, 'done', '{}', '2026-01-01')",
    "INSERT INTO annotator (id, name, role, created_at) VALUES (1, 'ann', 'annotator', '2026-01-01')",
]
PREFERENCE = (
    "INSERT INTO preference (annotator_id, task_id, run_a_id, run_b_id, shown_left_run_id, choice, "
    "revision, created_at, updated_at) VALUES (1, 7, 1, 2, 2, 'tie', 1, '2026-01-01', '2026-01-01')"
)


def test_preferences_up_and_down(any_url: str) -> None:
    eng = make_engine(any_url)
    upgrade(eng, "0005_undo_entries")
    with eng.begin() as conn:
        for sql in ROWS:
            conn.execute(sa.text(sql))
    assert upgrade(eng, "0006_preferences") == "0006_preferences"
    with eng.begin() as conn:
        conn.execute(sa.text(PREFERENCE))
    with pytest.raises(IntegrityError), eng.begin() as conn:  # one judgement per person, task and pair
        conn.execute(sa.text(PREFERENCE))
    cfg = alembic_config(eng)
    with eng.connect() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005_undo_entries")
    assert current_revision(eng) == "0005_undo_entries"
    assert "preference" not in sa.inspect(eng).get_table_names()
    with eng.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM run")).scalar() == 2
    eng.dispose()
