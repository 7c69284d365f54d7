"""A run is a fixed set of tasks: the set is frozen when the run is created, ``--resume`` only finishes
it (tasks added to the benchmark later are not run) and the monitor's "of N" counts that set."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli
from tui.screens.runs.data import run_rows


def invoke(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_resuming_a_finished_run_does_not_run_tasks_added_later(engine, db_path, make_bench) -> None:  # type: ignore[no-untyped-def]
    first = make_bench("mme", n=3)
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>")) as server:
        invoke(db_path, "endpoints", "add", "local", "--base-url", server.base_url, "--model", "m")
        run_id = int(invoke(db_path, "run", "-b", "mme", "-e", "local", "-m", "atomic").splitlines()[0])
        asked = len(server.chat_requests())
        later = make_bench("mme", n=2)  # the benchmark grows after the run finished
        invoke(db_path, "run", "--resume", str(run_id))
        assert len(server.chat_requests()) == asked  # nothing left to do: nothing asked
    with session_scope(engine) as s:
        ran = sorted(t.task_id for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)))
        (row,) = [r for r in run_rows(s) if r.id == run_id]
    assert ran == sorted(first) and not set(later) & set(ran)
    assert (row.total, row.finished) == (3, 3)  # "3 of 3", not "3 of 5"


def test_a_run_stored_before_task_sets_counts_the_tasks_it_started(engine, db_path, make_bench) -> None:  # type: ignore[no-untyped-def]
    """Runs created before the set was kept: the tasks they made trajectories for are their set."""
    make_bench("mme", n=2)
    with ScriptedOpenAI(handler=lambda req: text("<answer>red</answer>")) as server:
        invoke(db_path, "endpoints", "add", "local", "--base-url", server.base_url, "--model", "m")
        run_id = int(invoke(db_path, "run", "-b", "mme", "-e", "local", "-m", "atomic").splitlines()[0])
        with session_scope(engine) as s:
            run = s.get(Run, run_id)
            assert run is not None
            run.config = {k: v for k, v in run.config.items() if k != "task_set"}
        with session_scope(engine, "tester") as s:
            authoring.create_task(s, "mme", "a task added later")
        asked = len(server.chat_requests())
        invoke(db_path, "run", "--resume", str(run_id))
        assert len(server.chat_requests()) == asked
    with session_scope(engine) as s:
        (row,) = [r for r in run_rows(s) if r.id == run_id]
    assert (row.total, row.finished) == (2, 2)
