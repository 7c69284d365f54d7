"""``chainmark run`` as a whole process: it loads only what a run uses before its first model call
(every module is start-up time a user waits through), builds no SQLModel class on its way there,
and everything it did is in the database when the process has exited."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from evaluation.harness import RunSpec, start_run
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

ROOT = Path(__file__).resolve().parents[2]

# Run as the console script is, reporting at exit which modules the process had loaded.
PROBE = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps(sorted(sys.modules))))
from tui.cli import main
sys.argv[0] = "chainmark"
main()
"""


# The same, but noting the modules loaded when the process first connects to the model server (the
# ``socket.connect`` audit event for its port): what the run imported before its first model call.
FIRST_CALL_PROBE = """
import json, os, sys
port, noted = int(os.environ["MODEL_PORT"]), []
def at_first_call(event, args):
    if event == "socket.connect" and not noted and isinstance(args[1], tuple) and args[1][1:2] == (port,):
        noted.append(1)
        open(os.environ["PROBE_OUT"], "w").write(json.dumps(sorted(sys.modules)))
sys.addaudithook(at_first_call)
from tui.cli import main
sys.argv[0] = "chainmark"
main()
"""


def _run(
    db_path: Path, tmp_path: Path, *args: str, probe: str = PROBE, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    env = {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "CHAINMARK_DB": str(db_path),
        "PROBE_OUT": str(out),
    }
    proc = subprocess.run(
        [sys.executable, "-c", probe, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    return proc, set(json.loads(out.read_text())) if out.exists() else set()


# The ORM: SQLModel, SQLAlchemy's ORM and chainmark's 31 table classes (with the audit hooks they
# register) were a third of a second of every run's start-up; a run reads and writes through
# SQLAlchemy Core (store/core_tables.py) instead.
ORM = {"sqlmodel", "sqlalchemy.orm", "store.models", "store.audit"}


def test_a_run_builds_no_orm_before_its_first_model_call(
    engine: Engine, db_path: Path, tmp_path: Path, make_bench, endpoint: str, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme", n=3)
    scripted_openai.handler = lambda req: text("<answer>red</answer>")
    args = ("run", "-b", "mme", "-e", endpoint, "-m", "atomic", "-j", "2", "--json")
    env = {"MODEL_PORT": str(scripted_openai.port)}
    proc, at_first_call = _run(db_path, tmp_path, *args, probe=FIRST_CALL_PROBE, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["done"] == 3
    assert "sqlalchemy" in at_first_call and "evaluation.harness.runner" in at_first_call  # noted at the call
    assert not at_first_call & ORM, sorted(at_first_call & ORM)
    assert "pydantic" not in at_first_call  # the settings load with the standard library, and no table class
    # … nor at all in a run whose tools made no images
    _, at_exit = _run(db_path, tmp_path, "run", "-b", "mme", "-e", endpoint, "-m", "atomic", "--json")
    assert not at_exit & ORM, sorted(at_exit & ORM)


def test_a_run_loads_no_module_it_does_not_use(
    engine: Engine, db_path: Path, tmp_path: Path, make_bench, endpoint: str, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme", n=3)
    scripted_openai.handler = lambda req: text("<answer>red</answer>")
    proc, modules = _run(db_path, tmp_path, "run", "-b", "mme", "-e", endpoint, "-m", "atomic", "-j", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["done"] == 3
    assert len(scripted_openai.chat_requests()) == 3
    # the openai library (the harness posts through aiohttp itself: importing openai was half of a
    # run's start-up); the legacy httpx package and its command line's rich and pygments; the work
    # queue's PostgreSQL dialect; image libraries no tool call needed; multiprocessing, which only a
    # run that forks harness processes (above 128 in flight) needs
    unused = {
        "openai",
        "httpx",
        "rich",
        "pygments",
        "sqlalchemy.dialects.postgresql",
        "numpy",
        "PIL",
        "alembic",
        "textual",
        "multiprocessing",
    }
    assert not modules & unused, sorted(modules & unused)


def _crop_then_answer(req):  # type: ignore[no-untyped-def]
    if any(m.get("role") == "assistant" for m in req.messages):
        return text("<answer>red</answer>")
    return tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 50, 40]}))


def _stored(db_path: Path, run_id: int) -> tuple[str, list[tuple[Any, ...]]]:
    """The run's status and, per trajectory in task order, its status, answer and events, read by a
    fresh connection after the process that wrote them is gone."""
    with closing(sqlite3.connect(db_path)) as c:
        status = c.execute("SELECT status FROM run WHERE id = ?", (run_id,)).fetchone()[0]
        rows = c.execute(
            "SELECT t.task_id, t.status, t.final_answer, "
            "(SELECT group_concat(e.kind, ',') FROM (SELECT kind FROM event WHERE trajectory_id = t.id "
            "ORDER BY ordinal) e), "
            "(SELECT count(*) FROM eventasset a JOIN event e ON e.id = a.event_id WHERE e.trajectory_id = t.id) "
            "FROM trajectory t WHERE t.run_id = ? ORDER BY t.task_id",
            (run_id,),
        ).fetchall()
    return status, rows


def test_everything_a_run_did_is_stored_when_its_process_has_exited(
    engine: Engine, blobs, db_path: Path, tmp_path: Path, make_bench, endpoint: str, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme", n=12)
    scripted_openai.handler = _crop_then_answer
    args = ("run", "-b", "mme", "-e", endpoint, "-m", "atomic", "-j", "5", "--json")
    proc, _ = _run(db_path, tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["done"], summary["failed"], summary["api_calls"]) == (12, 0, 24)
    status, rows = _stored(db_path, summary["run_id"])
    assert status == "done" and len(rows) == 12
    # the same run executed in this process (no exit in between) stores the same results
    reference = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=5))
    assert (reference.done, reference.api_calls) == (12, 24)
    ref_status, ref_rows = _stored(db_path, reference.run_id)
    assert ref_status == "done"
    assert rows == ref_rows
    for _, traj_status, answer, kinds, assets in rows:
        assert (traj_status, answer) == ("done", "red")
        kinds_seen = kinds.split(",")
        assert kinds_seen.count("model_message") == 2 and kinds_seen[-1] == "answer"
        assert "tool_call" in kinds_seen and "tool_result" in kinds_seen
        assert assets >= 2  # the task's image and the crop


# Everything a run may load after its first call: every mode and every tool's implementation.
EVERYTHING_A_RUN_LOADS = """
import importlib, json, sys
import evaluation.harness.runner, evaluation.harness.procs
for mode in ("atomic", "code", "react", "plan", "step"):
    importlib.import_module("evaluation.harness.modes." + mode)
from evaluation.tools import get_tool_set, tool_set_names
for name in tool_set_names():
    for tool in get_tool_set(name).tools.values():
        tool.implementation()
print(json.dumps({"sets": tool_set_names(), "modules": sorted(sys.modules)}))
"""


def test_nothing_a_run_loads_later_builds_the_orm() -> None:
    # A first import of the ORM in the middle of a run (a service tool's first call, a tool image)
    # would hold the GIL for a third of a second while the run's calls are in flight.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(
        [sys.executable, "-c", EVERYTHING_A_RUN_LOADS], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = json.loads(out.stdout)
    assert {"gta", "agentic-mme"} <= set(loaded["sets"])
    assert "evaluation.tools.replay" in loaded["modules"]  # the service tools' cache: loaded, in Core
    assert not set(loaded["modules"]) & ORM, sorted(set(loaded["modules"]) & ORM)
