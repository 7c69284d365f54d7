"""Queued judging seen and stopped from the run's side: the run monitor's per-judge table (the numbers
of `runs show`, read off the UI thread and refreshed while items are open) and `runs cancel`, which
also cancels the run's queued judge items so nothing more is spent on a cancelled run."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from textual.widgets import DataTable
from textual_image.widget import HalfcellImage

from evaluation.judges import queue as jq
from store import claims, session_scope
from store.models import Run
from tests.tui.conftest import settle
from tests.tui.test_authoring_forms import until
from tests.workers.test_judge_queue import ITEM, ITEMS, JUDGE, invoke, vtc_run
from tui.app import make_app
from tui.context import AppContext
from tui.screens.runs.monitor import JUDGING_COLUMNS, RunMonitorScreen

NOWHERE = "http://127.0.0.1:9/v1"  # nothing is asked: items are claimed and finished by hand


def _finished_run(engine: Engine, n: int, queued: bool = False) -> int:
    run_id = vtc_run(engine, NOWHERE, n)
    with session_scope(engine, "tester") as s:
        run = s.get(Run, run_id)
        assert run is not None
        run.status = "running" if queued else "done"
        if queued:
            run.config = {**(run.config or {}), "queue": True}
    return run_id


def _row(screen: RunMonitorScreen) -> list[str] | None:
    table = screen.query_one("#run-judging", DataTable)
    if not screen.query_one("#run-judging-box").display or table.row_count != 1:
        return None
    return [str(v) for v in table.get_row_at(0)]


@pytest.mark.postgres
async def test_the_monitor_shows_and_refreshes_the_runs_queued_judging(
    pg_url, pg_engine, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    run_id = _finished_run(pg_engine, 4)
    with session_scope(pg_engine) as s:
        assert jq.enqueue(s, run_id, JUDGE, "j") == 4
        one, two, three = jq.claim(s, "A", 3, 60)
    with session_scope(pg_engine) as s:
        assert claims.fence(s, ITEMS, ITEM.id, "A", [(one.id, one.attempt)], verdicts=1)
        assert jq.finish_failed(s, "A", two, "endpoint down")
        s.execute(sa.update(ITEMS).where(ITEM.id == two.id).values(pid=1))  # claimed by another process
    # the table's numbers come from the function `runs show` uses, read on a worker thread
    threads: list[bool] = []
    real = jq.progress

    def recorded(session: Any, rid: int) -> list[jq.JudgeProgress]:
        threads.append(threading.current_thread() is threading.main_thread())
        return real(session, rid)

    monkeypatch.setattr("tui.screens.runs.data.judge_progress", recorded)
    app = make_app(
        AppContext(db=pg_url, actor="ann"),
        image_widget=HalfcellImage,
        engine=pg_engine,
    )
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(RunMonitorScreen())
        await settle(pilot, app)
        monitor = app.screen
        assert isinstance(monitor, RunMonitorScreen)
        await until(pilot, lambda: _row(monitor) is not None)
        assert [str(c.label) for c in monitor.query_one("#run-judging", DataTable).ordered_columns] == list(
            JUDGING_COLUMNS
        )
        assert _row(monitor) == [f"{JUDGE}@j", "faithful", "1/4", "1", "0", "2", "1", "2"]
        shown = json.loads(invoke(pg_url, tmp_path, "runs", "show", str(run_id), "--json").output)
        (j,) = shown["judging"]
        assert [j["judged"], j["items"], j["failed"], j["open"], j["running"], j["workers"]] == [1, 4, 1, 2, 1, 2]
        assert f"Queued judging of run {run_id}" in str(monitor.query_one("#run-judging-title").render())

        # the run is done; its open judging keeps the monitor reading: a worker finishes the held item
        with session_scope(pg_engine) as s:
            assert claims.fence(s, ITEMS, ITEM.id, "A", [(three.id, three.attempt)], verdicts=2)
        await until(pilot, lambda: (_row(monitor) or [])[2:8] == ["2/4", "1", "0", "1", "0", "2"])
        # `c` cancels the rest (as `runs cancel` does), which the table shows as cancelled, nothing open
        await pilot.press("c")
        await until(pilot, lambda: (_row(monitor) or [])[2:8] == ["2/4", "1", "1", "0", "0", "2"])
        notes = [str(n.message) for n in app._notifications]
        assert f"run {run_id}: also cancelled 1 queued judge item(s)" in notes, notes
        assert not any("not going in this session" in n for n in notes)
    assert threads and not any(threads)  # never read on the UI thread


@pytest.mark.postgres
def test_runs_cancel_also_cancels_the_runs_queued_judging(pg_url, pg_engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a queued run still going, with its finished trajectories queued for judging; one item is being judged
    run_id = _finished_run(pg_engine, 3, queued=True)
    with session_scope(pg_engine) as s:
        assert jq.enqueue(s, run_id, JUDGE, "j") == 3
        assert jq.enqueue(s, run_id, JUDGE, "j", mode="fixed") == 3  # a second judge of the same run
        assert jq.claim(s, "D", 1, 60)
    r = invoke(pg_url, tmp_path, "runs", "cancel", str(run_id))
    assert r.exit_code == 0, r.output
    assert f"run {run_id} cancelled" in r.output
    assert "also cancelled 5 queued judge item(s) (1 being judged now will finish)" in r.output
    with session_scope(pg_engine) as s:
        assert s.get(Run, run_id).status == "cancelled"  # type: ignore[union-attr]
        assert jq.claimable(s) == 0 and jq.claim(s, "E", 10, 60) == []  # nothing more is handed out
        faithful, fixed = sorted(jq.progress(s, run_id), key=lambda p: p.mode)
        assert (faithful.cancelled, faithful.running, faithful.open) == (2, 1, 1)
        assert (fixed.cancelled, fixed.running, fixed.open) == (3, 0, 0)
    # judging again opens the cancelled items; the command that queues them is the way back
    with session_scope(pg_engine) as s:
        assert jq.enqueue(s, run_id, JUDGE, "j", mode="fixed") == 3


@pytest.mark.postgres
def test_runs_cancel_of_a_finished_run_cancels_its_queued_judging_and_says_so(pg_url, pg_engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_id = _finished_run(pg_engine, 2)  # executed by one `chainmark run`, then judged with --queue
    r = invoke(pg_url, tmp_path, "runs", "cancel", str(run_id))
    assert r.exit_code == 1 and "no queued judging" in r.output, r.output  # nothing to cancel at all
    with session_scope(pg_engine) as s:
        assert jq.enqueue(s, run_id, JUDGE, "j") == 2
    r = invoke(pg_url, tmp_path, "runs", "cancel", str(run_id))
    assert r.exit_code == 0, r.output
    assert f"run {run_id} is not a queued run" in r.output
    assert "also cancelled 2 queued judge item(s)" in r.output and "being judged" not in r.output
    with session_scope(pg_engine) as s:
        (p,) = jq.progress(s, run_id)
        assert (p.items, p.cancelled, p.open) == (2, 2, 0)
        assert s.get(Run, run_id).status == "done"  # type: ignore[union-attr]


def test_runs_cancel_on_sqlite_still_refuses_a_run_that_is_not_queued(tmp_path: Path) -> None:
    """SQLite never queues, so a run there has no judging to cancel either."""
    from store import make_engine
    from store.migrate import upgrade
    from tests.scoring.builders import stored_run

    db = str(tmp_path / "c.db")
    engine = make_engine(db)
    upgrade(engine)
    with session_scope(engine, "tester") as s:
        run_id = int(stored_run(s, "vtc-demo", "vtc").id or 0)
    engine.dispose()
    r = invoke(db, tmp_path / "blobs", "runs", "cancel", str(run_id))
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1, r.output
    assert "not a queued run and has no queued judging" in r.output
