"""Every failing command prints one line and exits non-zero; the traceback goes to a log file beside
the database, and the line says where. Values PostgreSQL refuses (NUL, names longer than their
column) and import-run text no database can store are named as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tui.cli import cli


def _one_error_line(r) -> str:
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    return lines[0]


def test_an_unknown_bug_still_fails_and_says_where_its_traceback_went(tmp_path: Path, monkeypatch) -> None:
    from tui.commands import runs

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(runs, "_run_rows", broken)
    db = tmp_path / "c.db"
    line = _one_error_line(CliRunner().invoke(cli, ["--db", str(db), "runs", "list"]))
    log = tmp_path / "chainmark-errors.log"
    assert line == f"Error: internal error, please report it: RuntimeError: boom [traceback in {log}]"
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "RuntimeError: boom" in text
    assert oct(log.stat().st_mode & 0o777) == oct(0o600)


def test_chainmark_traceback_shows_the_traceback_instead(tmp_path: Path, monkeypatch) -> None:
    from tui.commands import runs

    monkeypatch.setattr(runs, "_run_rows", lambda *a, **k: 1 / 0)
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "runs", "list"], env={"CHAINMARK_TRACEBACK": "1"})
    assert isinstance(r.exception, ZeroDivisionError)


def test_import_run_names_the_file_whose_text_cannot_be_stored(tmp_path: Path) -> None:
    from tests.formats.fixtures import gta_step_predictions, write_gta

    db = str(tmp_path / "c.db")
    data = write_gta(tmp_path / "gta", n=2)
    assert CliRunner().invoke(cli, ["--db", db, "import", "gta", str(tmp_path / "gta")]).exit_code == 0
    bad = tmp_path / "preds.json"
    bad.write_text(json.dumps(gta_step_predictions(data)).replace('": "', '": "\\ud800'))
    line = _one_error_line(CliRunner().invoke(cli, ["--db", db, "import-run", "gta", str(bad), "--benchmark", "gta"]))
    assert line.startswith(f"Error: {bad}: text the database cannot store (a lone surrogate")


def test_a_tsv_field_over_the_csv_limit_is_one_line_naming_the_dataset(tmp_path: Path) -> None:
    from tests.formats.fixtures import write_vtc

    write_vtc(tmp_path / "vtc")
    tsv = tmp_path / "vtc" / "VTC-Bench.tsv"
    head, row, *rest = tsv.read_text().splitlines()
    cells = row.split("\t")
    cells[head.split("\t").index("question")] = "x" * 200_000
    tsv.write_text("\n".join([head, "\t".join(cells), *rest]) + "\n")
    line = _one_error_line(
        CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "import", "vtc", str(tmp_path / "vtc")])
    )
    assert (
        line
        == f"Error: {tmp_path / 'vtc'}: the CSV/TSV reader refused the file (field larger than field limit (131072))"
    )


@pytest.mark.postgres
@pytest.mark.parametrize(
    "args, meaning",
    [
        (
            ["endpoints", "add", "bad\x00name", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
            "PostgreSQL cannot store the NUL character in text",
        ),
        (
            ["endpoints", "add", "n" * 300, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
            "a value is longer than its column allows",
        ),
        (["annotators", "add", "a" * 300], "a value is longer than its column allows"),
    ],
)
def test_values_postgresql_refuses_are_one_line(pg_cluster, args: list[str], meaning: str) -> None:  # noqa: F811
    url = pg_cluster.new_database()
    line = _one_error_line(CliRunner().invoke(cli, ["--db", url, *args]))
    assert line.startswith(f"Error: the database refused a value: {meaning}")
    assert "[traceback in " in line


def test_the_error_handler_leaves_click_errors_alone(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "runs", "show", "99"])
    assert r.exit_code == 1 and r.stderr.strip() == "Error: no run with id 99"
