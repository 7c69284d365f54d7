"""Data that reaches the terminal through the CLI shows control characters escaped; JSON keeps the values
exactly (issue 14, item 6)."""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.formats.fixtures import write_atp
from tui import commands
from tui.cli import cli
from tui.safe_text import data_cells, json_safe, pictured, visible

HOSTILE = "title\x1b]0;pwned\x07 clear\x1b[2J secret\rshown [bold]x[/] [V] \x9b31m \u202eevil\u202c end"
# What a terminal would act on: none of these may reach it raw.
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x9b", "\u202e", "\u202c")


def run(db: Path, *args: str, ok: bool = True):
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def assert_escaped(output: str) -> None:
    for ch in RAW_CONTROLS:
        assert ch not in output, f"{ch!r} reached the terminal"
    for shown in ("\\x1b]0;pwned\\x07", "\\x1b[2J", "secret\\rshown", "[bold]x[/] [V]", "\\x9b31m", "\\u202eevil"):
        assert shown in output


def test_visible_escapes_controls_and_keeps_plain_text() -> None:
    assert visible("plain text, ünïcödé, 表") == "plain text, ünïcödé, 表"
    assert visible("a\nb\tc") == "a\\nb\\tc"
    assert visible("a\nb\tc", keep_newlines=True) == "a\nb\tc"
    assert visible("csv\r\nline\rover", keep_newlines=True) == "csv\r\nline\\rover"  # CRLF ends are harmless
    assert visible("\x00\x08\x7f\x85\ud800\u2028") == "\\0\\b\\x7f\\x85\\ud800\\u2028"
    assert visible(None) == "" and visible(42) == "42"


def test_table_cells_and_pictures() -> None:
    assert data_cells("[bold]run\x1b[2J", 3) == ["\\[bold]run\\x1b[2J", 3]  # DataTable markup escaped, number kept
    assert data_cells("plain") == ["plain"]
    assert pictured("a\x1bb\rc\u202ed") == "a␛b␍c\ufffdd" and len(pictured("\x1b\x9b")) == 2


def test_json_safe_keeps_the_values() -> None:
    value = {"q": HOSTILE, "s": "lone \ud800 surrogate"}
    text = json_safe(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert not any(ch in text for ch in RAW_CONTROLS)
    text.encode("utf-8")  # no lone surrogate left to break the stream


@pytest.fixture
def db(tmp_path: Path) -> Path:
    db = tmp_path / "x.db"
    run(db, "init")
    write_atp(tmp_path / "atp", n=1)
    run(db, "import", "atp", str(tmp_path / "atp"))
    return db


def test_tasks_list_and_show_escape_the_query(db: Path) -> None:
    tid = run(db, "tasks", "add", "-b", "atp", "-q", HOSTILE).output.strip()
    listed = run(db, "tasks", "list", "--search", "pwned").output  # the query column is cut at 60 characters
    assert not any(ch in listed for ch in RAW_CONTROLS)
    assert "title\\x1b]0;pwned\\x07 clear\\x1b[2J" in listed
    assert_escaped(run(db, "tasks", "show", tid).output)


def test_json_output_is_the_exact_value(db: Path) -> None:
    tid = run(db, "tasks", "add", "-b", "atp", "-q", HOSTILE).output.strip()
    out = run(db, "tasks", "show", tid, "--json").output
    assert json.loads(out)["query"] == HOSTILE
    assert not any(ch in out for ch in RAW_CONTROLS)


def test_runs_show_escapes_model_answers(db: Path, tmp_path: Path) -> None:
    (tmp_path / "outputs.jsonl").write_text(json.dumps({"trace_id": "trace-0", "output": HOSTILE}) + "\n")
    run_id = json.loads(run(db, "import-run", "atp", str(tmp_path / "outputs.jsonl"), "-b", "atp", "--json").output)[
        "run_id"
    ]
    shown = run(db, "runs", "show", str(run_id)).output
    for ch in RAW_CONTROLS:
        assert ch not in shown
    assert "\\x1b]0;pwned\\x07" in shown
    assert (
        json.loads(run(db, "runs", "show", str(run_id), "--json").output)["trajectories"][0]["final_answer"] == HOSTILE
    )


def test_error_messages_quoting_data_are_escaped(tmp_path: Path) -> None:
    result = run(tmp_path / "x.db", "import", "gta", str(tmp_path / "no\x1b[2Jsuch"), ok=False)
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "no\\x1b[2Jsuch" in result.output


def test_every_command_module_prints_through_the_escaping_echo() -> None:
    folder = Path(commands.__file__).parent
    for info in pkgutil.iter_modules([str(folder)]):
        if info.name.startswith("_"):
            continue
        source = (folder / f"{info.name}.py").read_text()
        assert "import click\n" not in source, f"tui/commands/{info.name}.py imports click directly"
