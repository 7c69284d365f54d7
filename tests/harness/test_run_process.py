"""``chainmark run`` as a whole process: it loads only what a run uses before its first model call
(every module is start-up time a user waits through), and everything it did is in the database
when the process has exited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy.engine import Engine

from tests.support.scripted_openai import ScriptedOpenAI, text

ROOT = Path(__file__).resolve().parents[2]

# Run as the console script is, reporting at exit which modules the process had loaded.
PROBE = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps(sorted(sys.modules))))
from tui.cli import main
sys.argv[0] = "chainmark"
main()
"""


def _run(db_path: Path, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "CHAINMARK_DB": str(db_path),
        "PROBE_OUT": str(out),
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    return proc, set(json.loads(out.read_text())) if out.exists() else set()


def test_a_run_loads_no_module_it_does_not_use(
    engine: Engine, db_path: Path, tmp_path: Path, make_bench, endpoint: str, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme", n=3)
    scripted_openai.handler = lambda req: text("<answer>red</answer>")
    proc, modules = _run(db_path, tmp_path, "run", "-b", "mme", "-e", endpoint, "-m", "atomic", "-j", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["done"] == 3
    assert len(scripted_openai.chat_requests()) == 3
    # the legacy httpx package (the openai client sends through httpx2) and its command line's
    # rich and pygments; the work queue's PostgreSQL dialect; image libraries no tool call needed
    unused = {"httpx", "rich", "pygments", "sqlalchemy.dialects.postgresql", "numpy", "PIL", "alembic", "textual"}
    assert not modules & unused, sorted(modules & unused)
