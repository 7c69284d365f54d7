"""The listings open a SQLite file through ``sqlite3`` as the engine opens it: the same PRAGMAs and
busy timeout from the settings, the same schema check with the same refusals, a new or unmigrated
file created and upgraded by the engine, the database named by ``--db`` or ``CHAINMARK_DB``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from store.schema_head import plain_head
from tests.support.template_db import copy_sqlite_template
from tui.cli import cli
from tui.context import AppContext


def invoke(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner(env=env).invoke(cli, list(args))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cm.db"
    copy_sqlite_template(path)
    return path


def _set_versions(db: Path, *versions: str) -> None:
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM alembic_version")
        c.executemany("INSERT INTO alembic_version VALUES (?)", [(v,) for v in versions])
    c.close()


@pytest.mark.parametrize("versions", [("0008_serve_tokens",), ("9999_newer",), ("0008_older", "0009_other")])
def test_a_listing_refuses_a_schema_as_the_engine_does(db: Path, versions: tuple[str, ...]) -> None:
    _set_versions(db, *versions)
    through_engine = invoke("--db", str(db), "endpoints", "list")  # opens through AppContext.engine
    for listing in (["benchmarks", "list"], ["tasks", "list", "--json"], ["runs", "list"]):
        r = invoke("--db", str(db), *listing)
        assert r.exit_code == 1
        assert r.stderr == through_engine.stderr
    if versions == ("0008_serve_tokens",):  # a real older revision: upgrade it
        assert f"the database is at schema {versions[0]}, this chainmark needs {plain_head()}" in through_engine.stderr
    elif len(versions) == 1:  # a revision this chainmark does not know was made by a newer one
        assert f"made by a newer chainmark (schema {versions[0]}" in through_engine.stderr
    else:
        assert "several schema heads" in through_engine.stderr


def test_an_empty_file_is_upgraded_then_listed(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    r = invoke("--db", str(path), "benchmarks", "list", "--json")
    assert (r.exit_code, r.stdout) == (0, "[]\n")
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT version_num FROM alembic_version").fetchall() == [(plain_head(),)]
    c.close()


def test_the_reader_gets_the_engines_pragmas_and_the_busy_timeout_setting(db: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA journal_mode=DELETE")
    c.close()
    monkeypatch.setenv("CHAINMARK_BUSY_TIMEOUT_MS", "4321")
    with AppContext(db=str(db)).reading() as conn:
        assert isinstance(conn, sqlite3.Connection) and conn.in_transaction
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (4321,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL


def test_chainmark_db_names_the_database_and_db_wins(db: Path, tmp_path: Path) -> None:
    with sqlite3.connect(db) as c:
        c.execute(
            "INSERT INTO benchmark (name, source_format, settings, created_at) VALUES ('b', 'gta', '{}', '2026-01-01')"
        )
    c.close()
    by_env = invoke("benchmarks", "list", "--json", env={"CHAINMARK_DB": str(db)})
    assert '"name": "b"' in by_env.stdout
    other = tmp_path / "other.db"
    copy_sqlite_template(other)
    by_option = invoke("--db", str(other), "benchmarks", "list", "--json", env={"CHAINMARK_DB": str(db)})
    assert by_option.stdout == "[]\n"


def test_a_listing_reads_while_a_writer_holds_the_write_lock(db: Path) -> None:
    """The schema check begins DEFERRED as the listing does (the engine's began IMMEDIATE, so a
    listing waited out the busy timeout behind any writer, then failed "database is locked")."""
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO benchmark (name, source_format, settings, created_at) VALUES ('w', 'gta', '{}', '')"
        )
        r = invoke("--db", str(db), "benchmarks", "list", "--json", env={"CHAINMARK_BUSY_TIMEOUT_MS": "200"})
        assert (r.exit_code, r.stdout) == (0, "[]\n"), r.stderr
    finally:
        writer.close()
