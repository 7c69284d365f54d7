"""SQLite batch migrations rebuild a table (create, copy, drop, rename). With foreign keys enforced,
dropping a table that other rows reference fails (or cascades), so the migration environment turns
them off for the run. SQLite ignores that pragma inside a transaction, so it must be issued before
the migration's transaction begins, and turned on again afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.config import Config
from sqlalchemy.engine import Engine

import store.migrate
from store import make_engine
from store.migrate import MIGRATIONS, head_revision, upgrade

REBUILD_BENCHMARK = '''\
"""test: rebuild the benchmark table, which tasks reference"""
from alembic import op
import sqlalchemy as sa

revision = "test_rebuild_benchmark"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("benchmark", recreate="always") as batch_op:
        batch_op.add_column(sa.Column("test_note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("benchmark", recreate="always") as batch_op:
        batch_op.drop_column("test_note")
'''


@pytest.fixture
def engine_with_a_task(tmp_path: Path) -> Engine:
    eng = make_engine(tmp_path / "fk.db")
    upgrade(eng)
    with eng.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO benchmark (id, name, source_format, settings, created_at) "
                "VALUES (1, 'b', 'gta', '{}', '2026-01-01')"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO task (id, benchmark_id, source_id, query, answer_spec, status, revision, tools_offered, "
                "meta, created_at, updated_at) VALUES (7, 1, 's1', 'q?', '{}', 'draft', 1, '[]', '{}', "
                "'2026-01-01', '2026-01-01')"
            )
        )
    return eng


def _with_extra_migration(monkeypatch: pytest.MonkeyPatch, folder: Path, head: str) -> None:
    folder.mkdir()
    (folder / "test_rebuild_benchmark.py").write_text(REBUILD_BENCHMARK.format(head=head), encoding="utf-8")
    original = store.migrate.alembic_config

    def config(engine: Engine) -> Config:
        cfg = original(engine)
        cfg.set_main_option("path_separator", "os")
        cfg.set_main_option("version_locations", os.pathsep.join([str(MIGRATIONS / "versions"), str(folder)]))
        return cfg

    monkeypatch.setattr(store.migrate, "alembic_config", config)


def test_a_migration_can_rebuild_a_referenced_table_on_sqlite(
    engine_with_a_task: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = engine_with_a_task
    _with_extra_migration(monkeypatch, tmp_path / "versions", head_revision(eng))

    assert upgrade(eng, "test_rebuild_benchmark") == "test_rebuild_benchmark"

    with eng.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("benchmark")}
        assert "test_note" in columns
        assert conn.execute(sa.text("SELECT id, benchmark_id FROM task")).all() == [(7, 1)]
        # Foreign keys are enforced again on the connection the migration used (the pool hands it out).
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    eng.dispose()


def test_foreign_keys_are_enforced_again_after_any_migration(tmp_path: Path) -> None:
    eng = make_engine(tmp_path / "fk2.db")
    upgrade(eng)
    with eng.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        conn.rollback()
        with pytest.raises(sa.exc.IntegrityError):
            with conn.begin():
                conn.execute(
                    sa.text(
                        "INSERT INTO task (benchmark_id, source_id, query, answer_spec, status, revision, "
                        "tools_offered, meta, created_at, updated_at) VALUES (999, 's', 'q', '{}', 'draft', 1, '[]', "
                        "'{}', '2026-01-01', '2026-01-01')"
                    )
                )
    eng.dispose()
