"""``chainmark benchmarks add`` (issue 16 item 5): a benchmark is made on purpose, with its format,
tool set and guidelines, so format checks apply and a typo in a task's benchmark never makes a new one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import run


def test_benchmarks_add_with_format_tools_and_guidelines(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    guide = tmp_path / "guide.md"
    guide.write_text("# Rules\nEvery query needs an image.\n")
    out = run(db, "benchmarks", "add", "receipts", "--format", "gta", "--guidelines", str(guide)).output
    assert "format gta, tools gta" in out
    run(db, "benchmarks", "add", "zoom", "--format", "agentic-mme", "--tools", "vtc")
    run(db, "benchmarks", "add", "plain", "--format", "chainmark")
    rows = {r["name"]: r for r in json.loads(run(db, "benchmarks", "list", "--json").output)}
    assert (rows["receipts"]["source_format"], rows["receipts"]["tool_set"]) == ("gta", "gta")
    assert (rows["zoom"]["source_format"], rows["zoom"]["tool_set"]) == ("agentic-mme", "vtc")
    assert (rows["plain"]["source_format"], rows["plain"]["tool_set"]) == ("chainmark", None)
    from store import make_engine, session_scope
    from store.models import Benchmark

    with session_scope(make_engine(db)) as s:
        from sqlmodel import select

        bench = s.exec(select(Benchmark).where(Benchmark.name == "receipts")).one()
        assert bench.guidelines == "# Rules\nEvery query needs an image.\n"
    # tasks go into it by name; a misspelt name is an error, not a new benchmark
    run(db, "tasks", "add", "-b", "receipts", "-q", "What is the total?")
    bad = run(db, "tasks", "add", "-b", "reciepts", "-q", "What is the total?", ok=False)
    assert bad.exit_code != 0 and "reciepts" in bad.output
    assert len(json.loads(run(db, "benchmarks", "list", "--json").output)) == 3


def test_benchmarks_add_refuses_duplicates_and_unknown_names(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    again = run(db, "benchmarks", "add", "receipts", "--format", "vtc", ok=False)
    assert again.exit_code == 1 and "already exists" in again.output
    fmt = run(db, "benchmarks", "add", "b2", "--format", "gtaa", ok=False)
    assert fmt.exit_code == 1 and "format must be one of" in fmt.output
    tools = run(db, "benchmarks", "add", "b3", "--format", "gta", "--tools", "nope", ok=False)
    assert tools.exit_code == 2 and "unknown tool set 'nope'" in tools.output
    rows = json.loads(run(db, "benchmarks", "list", "--json").output)
    assert [(r["name"], r["source_format"]) for r in rows] == [("receipts", "gta")]
