"""The listings print byte for byte what they printed when they read through SQLAlchemy Core, on
SQLite (now through ``sqlite3``, no SQLAlchemy) and on PostgreSQL (the same SQL text through
SQLAlchemy): ``tests/cli/listing_output/<backend>.json`` holds stdout, stderr and exit code of each
command over ``tests.support.listing_data``, written by the Core listings (commit dc91e93) with

    python -m tests.cli.test_listing_output sqlite|postgres

Each backend has its own file: they may order names differently (collation) and PostgreSQL gives
timestamps their zone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import make_engine
from tests.support.listing_data import fill
from tests.support.template_db import copy_sqlite_template
from tui.cli import cli

EXPECTED = Path(__file__).with_name("listing_output")
COMMANDS = [
    "benchmarks list",
    "benchmarks list --json",
    "tasks list",
    "tasks list --json",
    "tasks list --limit 7",
    "tasks list --json --limit 3",
    "tasks list --all",
    "tasks list --json --all --status draft",
    "tasks list -b alpha",
    "tasks list -b Zeta --status verified --json",
    "tasks list -b empty",
    "tasks list -b nosuch",
    "tasks list --category perception --limit 4",
    "tasks list --search ü",
    "tasks list --search CASE --json",
    "tasks list --search %",
    "tasks list --search _the",
    "tasks list --search nothing-matches",
    "runs list",
    "runs list --json",
]


def listings(db: str) -> dict[str, dict[str, object]]:
    """What each command prints over ``db``: stdout, stderr, exit code."""
    out = {}
    for command in COMMANDS:
        r = CliRunner(env={"PGTZ": "UTC"}).invoke(cli, ["--db", db, *command.split()])
        out[command] = {"stdout": r.stdout, "stderr": r.stderr, "exit": r.exit_code}
    return out


def filled_sqlite(path: Path) -> str:
    copy_sqlite_template(path)
    engine = make_engine(path)
    fill(engine)
    engine.dispose()
    return str(path)


def filled_postgres(cluster) -> str:  # type: ignore[no-untyped-def]
    url = cluster.new_database(migrated=True)
    engine = make_engine(url)
    fill(engine)
    engine.dispose()
    return url


def _expected(backend: str) -> dict[str, dict[str, object]]:
    return json.loads((EXPECTED / f"{backend}.json").read_text(encoding="utf-8"))


def _same(got: dict[str, dict[str, object]], backend: str) -> None:
    expected = _expected(backend)
    assert list(got) == list(expected)
    for command in COMMANDS:
        assert got[command] == expected[command], command


def test_sqlite_listings_print_what_the_core_listings_printed(tmp_path: Path) -> None:
    _same(listings(filled_sqlite(tmp_path / "listings.db")), "sqlite")


@pytest.mark.postgres
def test_postgres_listings_print_what_the_core_listings_printed(pg_cluster) -> None:  # type: ignore[no-untyped-def]
    _same(listings(filled_postgres(pg_cluster)), "postgres")


def test_the_stored_output_covers_what_must_be_escaped_and_counted() -> None:
    """The stored output is worth comparing with: escaped controls, unicode, each shown status, the
    'more not shown' line and the refusal of an unknown benchmark are in it."""
    for backend in ("sqlite", "postgres"):
        out = _expected(backend)
        text = "".join(str(v["stdout"]) + str(v["stderr"]) for v in out.values())
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
        assert "\\x1b" in text and "日本語" in text
        runs = json.loads(str(out["runs list --json"]["stdout"]))
        assert {r["status"] for r in runs} == {"done", "interrupted", "running", "queued", "failed", "pending"}
        assert "48 more tasks not shown" in str(out["tasks list --limit 7"]["stdout"])
        assert out["tasks list -b nosuch"]["exit"] == 1 and "no benchmark named" in str(
            out["tasks list -b nosuch"]["stderr"]
        )


if __name__ == "__main__":  # write the expected output with the code checked out now
    backend = sys.argv[1]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        if backend == "sqlite":
            got = listings(filled_sqlite(Path(tmp) / "listings.db"))
        else:
            from tests.support.postgres import ThrowawayCluster, pg_bindir

            cluster = ThrowawayCluster(pg_bindir())  # type: ignore[arg-type]
            cluster.start()
            try:
                got = listings(filled_postgres(cluster))
            finally:
                cluster.stop()
    EXPECTED.mkdir(exist_ok=True)
    (EXPECTED / f"{backend}.json").write_text(json.dumps(got, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
