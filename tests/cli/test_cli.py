"""The headless CLI end to end: the console script in a subprocess, the rest through CliRunner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tui.cli import cli
from tests.support.must import must

CHAINMARK = Path(sys.executable).with_name("chainmark")


def run(db: Path, *args: str, ok: bool = True):
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_console_script_demo_then_tasks_list_json_has_every_style(tmp_path):
    env = {**os.environ, "CHAINMARK_DB": str(tmp_path / "demo.db")}
    subprocess.run([str(CHAINMARK), "demo"], check=True, env=env, capture_output=True, cwd=tmp_path)
    out = subprocess.run(
        [str(CHAINMARK), "tasks", "list", "--json"], check=True, env=env, capture_output=True, text=True, cwd=tmp_path
    )
    tasks = json.loads(out.stdout)
    assert {t["benchmark"] for t in tasks} == {
        "demo-chainmark",
        "demo-gta",
        "demo-agentic-mme",
        "demo-vtc",
        "demo-isg",
        "demo-atp",
    }
    assert "textual" not in out.stderr
    assert (tmp_path / "demo.db.blobs").is_dir()


def test_init_creates_then_reports_current(tmp_path):
    from store.schema_head import _REVISION, MIGRATIONS

    revisions = {must(_REVISION.search(p.read_text())).group(1) for p in (MIGRATIONS / "versions").glob("*.py")}
    db = tmp_path / "x.db"
    first = run(db, "init").output
    head = first.split("schema empty → ", 1)[1].split()[0]
    assert head in revisions
    assert f"already at schema {head}" in run(db, "init").output


def test_author_a_task_from_the_cli(tmp_path):
    db = tmp_path / "x.db"
    run(db, "demo")
    tid = run(
        db,
        "tasks",
        "add",
        "-b",
        "demo-gta",
        "-q",
        "How many cups are on the table?",
        "--answer",
        '{"kind":"whitelist","groups":[["3","three"]]}',
    ).output.strip()
    assert "revision 2" in run(db, "tasks", "edit", tid, "--query", "How many cups are there?").output
    assert "submitted" in run(db, "tasks", "status", tid, "submitted").output
    shown = json.loads(run(db, "tasks", "show", tid, "--json").output)
    assert shown["query"] == "How many cups are there?" and shown["status"] == "submitted"
    assert {w["code"] for w in shown["warnings"]} >= {"too-few-steps", "no-image"}
    history = json.loads(run(db, "tasks", "history", tid, "--json").output)
    assert [h["action"] for h in history] == ["create", "update", "update"]
    assert history[1]["changed"] == ["query", "revision"] and history[1]["actor"] == "tester"
    listed = json.loads(run(db, "tasks", "list", "-b", "demo-gta", "--status", "submitted", "--json").output)
    assert [t["id"] for t in listed] == [int(tid)]


def test_bad_input_is_one_clean_line(tmp_path):
    db = tmp_path / "x.db"
    run(db, "demo")
    bad_json = run(db, "tasks", "add", "-b", "demo-gta", "-q", "x", "--answer", "{nope", ok=False)
    assert bad_json.exit_code == 2 and "not valid JSON" in bad_json.output
    bad_spec = run(db, "tasks", "add", "-b", "demo-gta", "-q", "x", "--answer", '{"kind":"mcq"}', ok=False)
    assert bad_spec.exit_code == 1 and "answer spec options" in bad_spec.output
    assert "Traceback" not in bad_spec.output
    unknown = run(db, "tasks", "list", "-b", "nope", ok=False)
    assert "no benchmark named 'nope'" in unknown.output
    jump = run(db, "tasks", "status", "1", "verified", ok=False)
    assert "a draft task can move to submitted, not verified" in jump.output


def test_an_outdated_database_is_refused_with_the_fix(tmp_path):
    import sqlalchemy as sa

    db = tmp_path / "old.db"
    run(db, "init")
    eng = sa.create_engine(f"sqlite:///{db}")
    with eng.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num='0008_serve_tokens'")  # one behind
    result = run(db, "tasks", "list", ok=False)
    assert "run `chainmark init`" in result.output


def test_benchmarks_list_counts_by_status(tmp_path):
    db = tmp_path / "x.db"
    run(db, "demo")
    rows = {r["name"]: r for r in json.loads(run(db, "benchmarks", "list", "--json").output)}
    assert rows["demo-gta"]["tasks"] == 3 and rows["demo-gta"]["by_status"] == {"draft": 3}


def test_opening_a_current_database_does_not_import_alembic(tmp_path):
    import subprocess
    import sys

    from store import make_engine
    from store.migrate import upgrade

    db = tmp_path / "a.db"
    upgrade(make_engine(db))
    code = (
        "import sys; from tui.context import AppContext; AppContext(db=sys.argv[1]).engine; "
        "print(any(m == 'alembic' or m.startswith('alembic.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_quick_start_opens_the_tui_on_a_real_terminal(tmp_path):
    """The README's first command, on a pseudo-terminal: the demo is built, the terminal is asked
    about graphics once, home shows the five benchmarks, ctrl+q leaves cleanly."""
    from tests.support.pty_terminal import PtyTerminal, pty_or_skip

    env = {**os.environ, "TERM": "xterm-256color", "CHAINMARK_USER": "tester"}
    env.pop("CHAINMARK_DB", None)
    pty_or_skip()
    term = PtyTerminal([str(CHAINMARK), "demo", "--open"], env=env, size=(120, 36), cwd=tmp_path)
    try:
        term.wait_for("Benchmarks", timeout=120)
        term.wait_for("(?s)demo-agentic-mme.*demo-atp.*demo-gta.*demo-isg.*demo-vtc", timeout=60)  # home's table
        assert term.raw.count(b"\x1b[c") == 1
        assert term.quit() == 0
    finally:
        term.close()
    assert (tmp_path / "chainmark.db").exists()


def test_output_piped_into_a_reader_that_stops_ends_quietly(tmp_path):
    """`chainmark … | head`: when the reader has gone, the command stops with SIGPIPE's status and no
    "internal error" or traceback (the pipe's read end is closed before the command writes at all)."""
    env = {**os.environ, "CHAINMARK_DB": str(tmp_path / "c.db")}
    subprocess.run([str(CHAINMARK), "init"], check=True, env=env, capture_output=True, cwd=tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [str(CHAINMARK), "schema", "events"], stdout=write_end, stderr=subprocess.PIPE, env=env, cwd=tmp_path
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == b""
