"""`chainmark --help` lists every command without importing any command module, and a subcommand
imports only the module that defines it (tui.command_index reads the sources); the list is the one
the real commands would print."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from tui import cli as cli_module
from tui.command_index import build_index

PROBE = """
import json, sys
from click.testing import CliRunner
from tui.cli import cli
out = CliRunner().invoke(cli, sys.argv[1:], terminal_width=100).output
print(json.dumps({"output": out, "modules": sorted(m for m in sys.modules if m.startswith("tui.commands.")
                                                   and not m.rsplit(".", 1)[1].startswith("_"))}))  # _click: shared
"""


def _probe(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def test_help_lists_every_command_without_importing_command_modules() -> None:
    lazy = _probe("--help")
    assert lazy["modules"] == []
    cli_module._register_commands()  # in this process: every module loaded, the real commands
    ctx = click.Context(cli_module.cli, info_name="chainmark", terminal_width=100)
    full = cli_module.cli.get_help(ctx)
    assert lazy["output"].split("Commands:")[1] == full.split("Commands:")[1].rstrip("\n") + "\n"


def test_a_subcommand_imports_only_its_own_module() -> None:
    assert _probe("tasks", "--help")["modules"] == ["tui.commands.tasks"]
    assert _probe("run", "--help")["modules"] == ["tui.commands.runs"]


def test_the_index_sees_every_registered_command_with_its_help() -> None:
    commands = cli_module.commands
    index = build_index(cli_module.Path(commands.__file__).parent, commands.__name__)
    cli_module._register_commands()
    registered = cli_module.cli.commands
    assert index.opaque_modules == []  # otherwise --help imports those modules: make register plain
    assert set(index.commands) == set(registered)
    for name, entry in index.commands.items():
        assert click.Command(name, help=entry.help).get_short_help_str(80) == registered[name].get_short_help_str(80), (
            name
        )


HEAVY = ("sqlalchemy", "sqlmodel", "openai", "numpy", "textual", "PIL", "cv2", "httpx", "pydantic")
IMPORT_ALL = """
import json, sys
from tui import cli
cli._register_commands()
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))))
"""


def test_command_modules_import_no_heavy_library_until_a_command_runs() -> None:
    """Every command module can be imported (so its ``--help`` printed) without the database layer,
    the model client or the array libraries: those load inside the command that uses them."""
    proc = subprocess.run([sys.executable, "-c", IMPORT_ALL, *HEAVY], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == []


def test_the_tool_sets_offered_as_choices_are_the_registered_ones() -> None:
    from evaluation.tools import tool_set_names
    from tui.commands.tools import TOOL_SET

    assert list(TOOL_SET.choices) == tool_set_names() == ["gta", "agentic-mme", "vtc", "atp"]


LISTINGS = """
import json, sys
from click.testing import CliRunner
from tui.cli import cli
outputs = [CliRunner().invoke(cli, args.split(), catch_exceptions=False).output for args in sys.argv[2:]]
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"sqlmodel", "openai", "sqlalchemy", "alembic", "pydantic"}
                or m in {"store.models", "evaluation.harness.runner"})
print(json.dumps({"outputs": outputs, "loaded": loaded}))
"""


def _listing(db, *commands: str) -> dict:
    code = LISTINGS
    args = [f"--db {db} {c}" for c in commands]
    proc = subprocess.run([sys.executable, "-c", code, "-", *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def test_listings_on_sqlite_print_their_rows_without_sqlalchemy(tmp_path) -> None:
    """``benchmarks list``, ``tasks list`` and ``runs list`` on a SQLite file read the rows they print
    through ``sqlite3`` (store.sqlite_read): no SQLAlchemy, no Alembic, no SQLModel, no pydantic (the
    settings load with the standard library), no model client."""
    from annotation import tasks as authoring
    from store import make_engine, session_scope
    from store.migrate import upgrade
    from store.models import ModelEndpoint, Run

    db = tmp_path / "cm.db"
    engine = make_engine(db)
    upgrade(engine)
    with session_scope(engine, "tester") as s:
        bench = authoring.create_benchmark(s, "lazy-bench", "gta", tool_set="gta")
        authoring.create_task(s, bench.name, "How many cats?", answer_spec={"kind": "exact", "value": "3"})
    with session_scope(engine, "tester") as s:
        ep = ModelEndpoint(name="ep", base_url="http://x/v1", model="m")
        s.add(ep)
        s.flush()
        assert bench.id is not None and ep.id is not None
        s.add(
            Run(
                name="r",
                benchmark_id=bench.id,
                endpoint_id=ep.id,
                mode="atomic",
                status="done",
                config={"replay": True},
            )
        )
    engine.dispose()

    lists = _listing(db, "benchmarks list --json", "tasks list --json", "runs list --json", "tasks list")
    benchmarks, tasks, runs = (json.loads(out) for out in lists["outputs"][:3])
    assert [(b["name"], b["tasks"], b["by_status"]) for b in benchmarks] == [("lazy-bench", 1, {"draft": 1})]
    assert [(t["benchmark"], t["query"], t["answer_kind"]) for t in tasks] == [
        ("lazy-bench", "How many cats?", "exact")
    ]
    assert [(r["name"], r["benchmark"], r["endpoint"], r["status"], r["replay"]) for r in runs] == [
        ("r", "lazy-bench", "ep", "done", True)
    ]
    assert "How many cats?" in lists["outputs"][3]
    assert lists["loaded"] == []


def test_listings_of_a_new_database_create_it_through_the_engine(tmp_path) -> None:
    """A missing file is created and migrated as before (the engine's way, SQLAlchemy and all), then listed."""
    db = tmp_path / "new" / "cm.db"
    lists = _listing(db, "benchmarks list --json")
    assert json.loads(lists["outputs"][0]) == []
    assert db.stat().st_mode & 0o777 == 0o600
    assert "sqlalchemy" in lists["loaded"]
