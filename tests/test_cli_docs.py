"""docs/cli.md is the command tree's own help: it fails here when a command, option or help text
changed and the reference was not written again (`python .ci/cli_docs.py`)."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_cli_reference_is_current() -> None:
    render = runpy.run_path(str(ROOT / ".ci" / "cli_docs.py"))["render"]
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == render(), "docs/cli.md is stale: run `python .ci/cli_docs.py`"


def test_the_reference_covers_every_command_and_subcommand() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for heading in ("## `chainmark`", "### `chainmark run`", "### `chainmark tasks`", "#### `chainmark tasks list`"):
        assert heading in text, heading
