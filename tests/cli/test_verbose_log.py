"""`chainmark --verbose` writes a debug log beside the database; without it nothing is written."""

from __future__ import annotations

import logging
from pathlib import Path

from click.testing import CliRunner

from tui.cli import cli
from tui.logfile import log_path


def test_verbose_logs_the_command_and_the_migration_beside_the_database(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "--verbose", "init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "x.db.log").read_text(encoding="utf-8")
    assert "chainmark " in text and "init" in text
    assert "store.migrate: schema empty -> " in text  # to the newest migration, whichever it is
    # the handler is gone afterwards: the next command without --verbose adds nothing
    assert not any(getattr(h, "baseFilename", "").endswith("x.db.log") for h in logging.getLogger().handlers)
    CliRunner().invoke(cli, ["--db", str(db), "init"], catch_exceptions=False)
    assert (tmp_path / "x.db.log").read_text(encoding="utf-8") == text


def test_a_refused_command_is_logged_with_its_reason(tmp_path: Path) -> None:
    db = tmp_path / "y.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "-v", "tasks", "add", "-b", "nope", "-q", "q"])
    assert result.exit_code == 1
    text = (tmp_path / "y.db.log").read_text(encoding="utf-8")
    assert "refused:" in text and "nope" in text


def test_without_verbose_there_is_no_log_file(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    CliRunner().invoke(cli, ["--db", str(db), "init"], catch_exceptions=False)
    assert not (tmp_path / "z.db.log").exists()


def test_a_server_database_logs_in_the_working_directory(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert log_path("postgresql+psycopg://u@h/db") == tmp_path / "chainmark.log"
