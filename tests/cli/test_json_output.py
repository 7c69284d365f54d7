"""Commands that change data take --json and then print exactly one JSON document on stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tui.cli import cli


def run_json(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_init_demo_and_task_authoring_print_one_json_document(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    first = run_json(db, "init")
    assert first["before"] is None and first["after"] == first["head"]
    assert run_json(db, "init")["before"] == first["head"]
    demo = run_json(db, "demo")
    assert set(demo["created"]) >= {"demo-gta", "demo-vtc"} and demo["created"]["demo-gta"] > 0
    assert sum(run_json(db, "demo")["existing"].values()) == sum(demo["created"].values())

    added = run_json(
        db, "tasks", "add", "-b", "demo-gta", "-q", "How many cups?", "--answer", '{"kind":"exact","value":"3"}'
    )
    assert (added["benchmark"], added["status"], added["revision"]) == ("demo-gta", "draft", 1)
    edited = run_json(db, "tasks", "edit", str(added["id"]), "--query", "How many cups are there?")
    assert (edited["id"], edited["revision"]) == (added["id"], 2)
    assert run_json(db, "tasks", "status", str(added["id"]), "submitted")["status"] == "submitted"

    exported = run_json(db, "export", "gta", str(tmp_path / "out"), "--benchmark", "demo-gta")
    assert exported["tasks"] >= 1 and Path(exported["path"]).exists()


def test_demo_refuses_json_with_open(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db"), "demo", "--open", "--json"])
    assert result.exit_code == 2 and "exclude each other" in result.output


@pytest.mark.parametrize("args", [["tasks", "add", "-b", "nope", "-q", "q"]])
def test_errors_stay_off_stdout_in_json_mode(tmp_path: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db"), *args, "--json"])
    assert result.exit_code != 0 and result.stdout == ""


def test_json_is_written_in_pieces_with_the_bytes_one_string_would_have(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``emit_json`` writes a large document a bounded run of encoder pieces at a time (``score --json
    --per-item`` at 100,000 items held its whole text twice); what it writes is the one-string text."""
    from tui import context

    writes: list[str] = []
    doc = {
        "rows": [{"id": n, "text": f"a\u202eb\x85{n}\u2028", "v": [n / 3, None, True]} for n in range(300)],
        "when": Path("/x"),
    }
    monkeypatch.setattr(context, "_JSON_PIECES", 7)
    real_write = context.sys.stdout.write

    def write(text: str) -> int:
        writes.append(text)
        return real_write(text)

    monkeypatch.setattr(context.sys.stdout, "write", write)
    context.emit_json(doc)
    out = capsys.readouterr().out
    expected = json.dumps(doc, indent=2, ensure_ascii=False, default=str)
    expected = "".join(f"\\u{ord(c):04x}" if c in "\u202e\x85\u2028" else c for c in expected) + "\n"
    assert out == expected
    assert len(writes) > 100 and max(map(len, writes)) < 1_000  # in pieces, none of them the whole text
    assert json.loads(out)["rows"][299]["text"] == "a\u202eb\x85299\u2028"
