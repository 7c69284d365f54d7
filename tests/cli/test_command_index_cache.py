"""The command index is kept in ``__pycache__`` and reused only while the command modules are
unchanged: the same index as parsing them, rebuilt when one changes, and a read-only folder only
means parsing every time."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tui import command_index as ci
from tui import commands

SOURCES = Path(commands.__file__).parent


def _copy(tmp_path: Path) -> Path:
    pkg = tmp_path / "cmds"
    pkg.mkdir()
    for path in SOURCES.glob("*.py"):
        shutil.copy(path, pkg / path.name)
    return pkg


def test_cached_index_equals_the_parsed_one_and_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = _copy(tmp_path)
    parsed = ci.build_index(pkg, "tui.commands")
    assert ci.cached_index(pkg, "tui.commands") == parsed
    assert (pkg / "__pycache__" / ci.CACHE_NAME).exists()

    def no_parsing(path: Path) -> None:
        raise AssertionError(f"parsed {path.name} although nothing changed")

    monkeypatch.setattr(ci, "_read_module", no_parsing)
    assert ci.cached_index(pkg, "tui.commands") == parsed


def test_a_changed_module_rebuilds_the_index(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    ci.cached_index(pkg, "tui.commands")
    (pkg / "extra.py").write_text(
        "import click\n\n\n@click.command('extra-cmd')\ndef extra() -> None:\n"
        '    """Added after the index was cached."""\n\n\ndef register(cli):\n    cli.add_command(extra)\n'
    )
    index = ci.cached_index(pkg, "tui.commands")
    assert index.commands["extra-cmd"].help == "Added after the index was cached."
    runs = pkg / "runs.py"
    runs.write_text(runs.read_text().replace('@click.command("run")', '@click.command("run-renamed")'))
    os.utime(runs, ns=(1, 1))  # even with an older time stamp: the size differs
    index = ci.cached_index(pkg, "tui.commands")
    assert "run-renamed" in index.commands and "run" not in index.commands


def test_an_unwritable_cache_folder_still_gives_the_index(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    (pkg / "__pycache__").write_text("not a folder")  # nothing can be written where the cache goes
    assert ci.cached_index(pkg, "tui.commands") == ci.build_index(pkg, "tui.commands")
    (pkg / "__pycache__").unlink()
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / ci.CACHE_NAME).write_text("{broken")
    assert ci.cached_index(pkg, "tui.commands") == ci.build_index(pkg, "tui.commands")
