"""Fixtures every test area shares: a real SQLite file at the newest schema, a session, blobs; and a
hermetic session (``tests/support/hermetic.py``): private temp, home and cache folders for every test
process, and a failed session when a test leaves a process or a listening socket behind.

Tests never use ``sqlite://`` in memory: thread workers would each see a different empty database.
The schema is built by Alembic once per test process and copied for each test (an upgrade costs
about 0.1 s of CPU and a burst of file syncs; a copy costs neither).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import make_engine, session_scope
from store.blobs import FolderBlobStore
from store.migrate import upgrade
from tests.support import headless_render, hermetic, pilot_idle
from tests.support.postgres import ThrowawayCluster, pg_bindir
from tests.support.template_db import copy_sqlite_template

# Before any test module is imported: keep the developer's environment, home and temp folder out.
SESSION_ROOT, OWNS_SESSION_ROOT = hermetic.session_root()
hermetic.make_private_folders(SESSION_ROOT, os.environ.get("PYTEST_XDIST_WORKER"))
hermetic.forget_user_settings()
hermetic.give_children_default_interrupts()
os.environ.pop("TEXTUAL_THEME", None)
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
LEFTOVERS_KEY = "chainmark_leftovers"
# How long the end of a session waits for processes on their way out (xdist workers, stopped servers).
LEFTOVER_WAIT_S = float(os.environ.get("CHAINMARK_TEST_LEFTOVER_WAIT_S", "15"))
_leftovers_of_workers: list[str] = []


def _leftovers_here() -> list[str]:
    """What this process still runs or listens on: its child processes, its listening sockets and,
    in the process that made the session folder, any process carrying that folder in its environment."""
    root = SESSION_ROOT if OWNS_SESSION_ROOT else None
    hermetic.stop_multiprocessing_helpers()
    processes = hermetic.wait_for_processes_to_end(root, timeout_s=LEFTOVER_WAIT_S)
    hermetic.stop(processes)
    found = [f"process {pid}: {command}" for pid, command in sorted(processes.items())]
    return found + [f"{where} (in test process {os.getpid()})" for where in hermetic.listening_sockets()]


EXTENDED_OPTION = "--extended"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        EXTENDED_OPTION,
        action="store_true",
        help="also run the extended tests (marker extended: the same checks over every size, mode and case)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The default suite leaves out the extended tests: each repeats a check the default suite makes
    once (another size, mode or case), for ``--extended`` (``bash .ci/run --extended``) to run."""
    if config.getoption(EXTENDED_OPTION):
        return
    extended = [item for item in items if item.get_closest_marker("extended")]
    if extended:
        config.hook.pytest_deselected(items=extended)
        items[:] = [item for item in items if not item.get_closest_marker("extended")]


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not loaded
def pytest_testnodedown(node: Any, error: object) -> None:
    """The xdist controller collects what each worker found left behind."""
    _leftovers_of_workers.extend(getattr(node, "workeroutput", {}).get(LEFTOVERS_KEY, []))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session when a test left a server, a cluster or a child process running."""
    _collect_and_freeze_the_heap()
    left = _leftovers_of_workers + _leftovers_here()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports
        workeroutput[LEFTOVERS_KEY] = left
        return
    if left:
        _report_leftovers(session, left)
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not OWNS_SESSION_ROOT:
        return
    if session.exitstatus == pytest.ExitCode.OK:
        hermetic.remove_session_root(SESSION_ROOT)
    else:
        print(f"\nthe tests' private folders are kept for inspection: {SESSION_ROOT}", file=sys.stderr)


def _collect_and_freeze_the_heap() -> None:
    """After this session's last test, one full collection, then every survivor is left out of later ones.

    pytest ends a session with five full collections (to catch exceptions raised while objects are
    freed), after an xdist worker has told the controller it is done. A worker's heap after a few
    hundred app tests (about 10,000 objects a test stay alive: Textual's strips and their caches) made
    them take seconds on a busy machine, long enough for execnet to interrupt the worker (it sends
    SIGINT 5 s after asking it to end: the KeyboardInterrupt "ignored in gc_callback" at a run's end).
    Done here, before the worker reports, the collection is the same and what follows it is quick."""
    gc.collect()
    gc.freeze()


def _report_leftovers(session: pytest.Session, left: list[str]) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [*left, "(stopped now; the test that started each one must stop it)"]
    if reporter is None:
        print("\nleft running by the test session:\n" + "\n".join(lines), file=sys.stderr)
        return
    reporter.write_sep("=", "left running by the test session", red=True, bold=True)
    for line in lines:
        reporter.write_line(line, red=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[ThrowawayCluster]:
    """One throwaway PostgreSQL cluster per test process, for every area's PostgreSQL tests; stopped
    (and its folder removed) at the end of the session, even when starting it failed half-way."""
    bindir = pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs them)")
    cluster = ThrowawayCluster(bindir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def _temp_folders_kept_private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A test must leave the temp folder it shares with the tests after it (this worker's; the folders
    above it are the other workers' too) as it was."""
    own = tmp_path_factory.getbasetemp()
    before = hermetic.folder_modes(own, own)
    yield
    changed = hermetic.changed_modes(before)
    assert not changed, f"the test changed the shared temp folder's mode (put back now): {changed}"


@pytest.fixture(autouse=True)
def _headless_frames(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Apps under ``run_test`` skip the frames they would throw away (``tests/support/headless_render.py``)."""
    if "textual" in sys.modules and not headless_render.every_frame_wanted(request.node):
        headless_render.skip_discarded_frames(monkeypatch)


@pytest.fixture(autouse=True)
def _pilot_waits_in_short_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot's wait for an idle app sleeps 5 ms a step, not 20 (``tests/support/pilot_idle.py``)."""
    if "textual" in sys.modules:
        pilot_idle.wait_in_short_steps(monkeypatch)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "chainmark.db"


@pytest.fixture
def engine(db_path: Path) -> Iterator[Engine]:
    copied = copy_sqlite_template(db_path)
    eng = make_engine(db_path)
    if not copied:  # a file an earlier fixture put there is upgraded as it is
        upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """One unit of work acting as 'tester'; committed at the end of the test."""
    with session_scope(engine, actor="tester") as s:
        yield s


@pytest.fixture
def blobs(db_path: Path) -> FolderBlobStore:
    return FolderBlobStore(db_path.with_name(db_path.name + ".blobs"))
