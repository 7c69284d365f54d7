"""The four commands end to end through click, against a real database file."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.formats.fixtures import gta_step_predictions, write_gta, write_mme


def _run(db: Path, *args: str):
    from tui.cli import cli

    return CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)


def test_import_export_and_runs_via_cli(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("CHAINMARK_BLOBS", raising=False)
    db = tmp_path / "cm.db"
    data = write_gta(tmp_path / "gta", n=3)
    res = _run(db, "import", "gta", str(tmp_path / "gta"), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["created"] == 3
    res = _run(db, "import", "gta", str(tmp_path / "gta"))
    assert "0 created, 0 updated, 3 unchanged" in res.output
    res = _run(db, "export", "gta", str(tmp_path / "out"), "--benchmark", "gta")
    assert res.exit_code == 0 and "3 tasks" in res.output
    assert json.loads((tmp_path / "out" / "dataset.json").read_text()) == data
    (tmp_path / "p.json").write_text(json.dumps(gta_step_predictions(data)))
    res = _run(db, "import-run", "gta", str(tmp_path / "p.json"), "--benchmark", "gta", "--name", "other", "--json")
    assert res.exit_code == 0, res.output
    run_id = json.loads(res.output)["run_id"]
    res = _run(db, "export-run", "gta", str(run_id), str(tmp_path / "back.json"))
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "back.json").read_text()) == gta_step_predictions(data)


def test_cli_errors_are_one_clean_line(tmp_path: Path) -> None:
    db = tmp_path / "cm.db"
    write_mme(tmp_path / "mme", n=2)
    (tmp_path / "mme" / "json" / "0001.json").write_text('{"task_id": "x", "input": ')
    res = _run(db, "import", "agentic-mme", str(tmp_path / "mme"))
    assert res.exit_code == 1
    assert "Traceback" not in res.output
    assert res.output.startswith("Error: ") and "0001.json: not valid JSON" in res.output
    res = _run(db, "import-run", "gta", str(tmp_path / "nothing.json"), "--benchmark", "gta")
    assert res.exit_code == 1 and "Traceback" not in res.output
