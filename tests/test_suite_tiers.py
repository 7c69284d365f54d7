"""The default suite leaves out the tests marked ``extended``; ``--extended`` runs them too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALKS = ["tests/tui/test_tool_forms_builder_80x24.py", "tests/tui/test_tool_forms_blind_80x24.py"]


def _collected(*options: str) -> list[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "pytest_asyncio"]
    done = subprocess.run([*argv, *options, *WALKS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]


def test_extended_tests_run_only_with_the_option() -> None:
    assert _collected() == [WALKS[0]]
    assert sorted(_collected("--extended")) == sorted(WALKS)
