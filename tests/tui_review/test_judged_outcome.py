"""Answers of judged benchmarks (ATP, ISG) say they are judged by an LLM judge, not auto-scored, and
whether the verdict is in: never "no answer to score", which says the model gave no answer."""

from __future__ import annotations

import json

from sqlmodel import select

from evaluation.judges.runner import judge_run
from evaluation.scoring.item_outcome import trajectory_outcome
from store import session_scope
from store.models import Trajectory
from tests.scoring.test_judges import atp_run
from evaluation.benchmarks.atp import SUB_METRICS
from tests.support.scripted_openai import scripted_openai, text  # noqa: F401  (fixture)
from tests.tui_review.conftest import settle
from tui.screens.runs.trajectory import TrajectoryScreen

CHECKS = tuple(name for _, name in SUB_METRICS)  # the per-call checks of ATP's precision judge


def _task_line(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(str(w.render()) for w in app.screen.query("Static"))


async def test_atp_answer_is_shown_as_judged_and_then_with_its_verdict(
    make_tui, engine, blobs, scripted_openai, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    run_id = atp_run(engine, scripted_openai.base_url)
    with session_scope(engine) as s:
        tid = s.exec(select(Trajectory.id).where(Trajectory.run_id == run_id)).one() or 0
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(tid))
        await settle(pilot, app)
        shown = _task_line(app)
        assert "scored: judged by LLM judge atp-chief, not auto-scored: no verdict yet" in shown
        assert "no answer" not in shown
    scripted_openai.push(
        text(json.dumps({"calls": [{"index": 0, **{k: True for k in CHECKS}}]})),
        text('{"missed": []}'),
        text('{"score": 64, "tier": "good but flawed"}'),
    )
    for judge in ("atp-precision", "atp-recall", "atp-chief"):
        judge_run(engine, blobs, run_id, judge, "judge-ep")
    with session_scope(engine) as s:
        outcome = trajectory_outcome(s, tid)
    assert outcome.score == 0.64 and outcome.right is True  # the number is the Chief Judge's, as before
    assert outcome.describe() == "judged 0.64 by LLM judge atp-chief (not auto-scored)"
