"""``chainmark score`` leaves the scored run to the process's exit instead of freeing it one object at
a time (``tui.exit_keep``): the kept objects must really survive the exit unfreed in the console
script, be dropped by the next command in a process that stays (tests), and the runner must hand over
the loaded run only when asked and only when the run was read in one piece."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

from evaluation.scoring import runner
from evaluation.scoring.loader import LoadedRun
from store import make_engine
from store.migrate import upgrade
from tests.support.scoring_runs import write_run
from tui import exit_keep

ROOT = Path(__file__).resolve().parents[2]

# An object that says when it is freed, kept for the exit; the exit as ``tui.cli.main`` ends (or not).
EXIT = """
import sys
from tui import exit_keep
class Noisy:
    def __del__(self):
        sys.stdout.write("freed\\n")
        sys.stdout.flush()
exit_keep.keep_until_exit([Noisy()])
if sys.argv[1] == "leave":
    exit_keep.leave_to_exit()
print("done", flush=True)
"""


@pytest.mark.parametrize("leave, freed", [("leave", False), ("plain", True)])
def test_kept_objects_are_not_freed_at_exit_once_left_to_it(leave: str, freed: bool) -> None:
    proc = subprocess.run([sys.executable, "-c", EXIT, leave], capture_output=True, text=True, check=True, cwd=ROOT)
    assert proc.stdout.splitlines() == (["done", "freed"] if freed else ["done"])


class _Obj:
    pass


def test_each_keep_drops_the_previous_objects() -> None:
    first, second = _Obj(), _Obj()
    gone, kept = weakref.ref(first), weakref.ref(second)
    exit_keep.keep_until_exit([first])
    del first
    assert gone() is not None
    exit_keep.keep_until_exit([second])
    del second
    gc.collect()
    assert gone() is None and kept() is not None
    exit_keep.keep_until_exit()


@pytest.fixture(scope="module")
def amme_engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    engine = make_engine(tmp_path_factory.mktemp("keep") / "cm.db")
    upgrade(engine)
    run_id = write_run(engine, "agentic-mme", 12)
    yield engine, run_id
    engine.dispose()


def test_score_run_hands_over_the_loaded_run_when_asked(amme_engine: Any) -> None:
    engine, run_id = amme_engine
    kept: list[Any] = []
    res = runner.score_run(engine, run_id, embedder="hashing", write=False, keep=kept)
    assert len(kept) == 1 and isinstance(kept[0], LoadedRun)
    assert [it.trajectory["id"] for it in kept[0].items] == [row["trajectory_id"] for row in res.per_item]
    plain = runner.score_run(engine, run_id, embedder="hashing", write=False)
    assert plain.public(per_item=True) == res.public(per_item=True)


def test_a_chunked_run_keeps_nothing(amme_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, run_id = amme_engine
    monkeypatch.setattr(runner, "CHUNK", 5)  # three chunks: each is freed before the next is loaded
    kept: list[Any] = []
    res = runner.score_run(engine, run_id, embedder="hashing", write=False, keep=kept)
    assert kept == [] and res.metrics["total_cases"] == 12


def test_the_score_command_keeps_its_run_and_result(amme_engine: Any) -> None:
    from click.testing import CliRunner

    from tui.cli import cli

    engine, run_id = amme_engine
    db = engine.url.database
    out = CliRunner().invoke(cli, ["--db", db, "score", str(run_id), "--embedder", "hashing", "--no-write", "--json"])
    assert out.exit_code == 0, out.output
    (kept,) = exit_keep._kept
    loaded, res, doc = kept
    assert isinstance(loaded, LoadedRun) and len(loaded.items) == 12
    assert res.run_id == run_id and doc["metrics"] == res.public()["metrics"]
    exit_keep.keep_until_exit()
