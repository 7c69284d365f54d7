"""Agentic-MME and VTC runs are scored a chunk of trajectories at a time, like GTA's (flat memory at 100k):
the result, per-item rows included, is the one-pass result wherever the chunks are cut, judge verdicts
included (each chunk has its own oracle). And the judge oracle answers a question no verdict is about
without rendering or hashing its prompt, yet still refuses what building the prompt refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from evaluation.benchmarks import get_profile
from evaluation.benchmarks.base import ScoreContext
from evaluation.judges import oracle as oracle_module
from evaluation.judges.oracle import StoreOracle
from evaluation.judges.templates import TemplateError
from evaluation.scoring import runner
from evaluation.scoring.embedding import HashingEmbedder
from evaluation.scoring.items import JudgeRequest
from evaluation.scoring.loader import load_run
from store import session_scope
from store.models import Judge, Verdict
from tests.support.scoring_runs import write_run


def _public(engine: sa.engine.Engine, run_id: int, mode: str) -> str:
    res = runner.score_run(engine, run_id, mode=mode, embedder="hashing", write=False)
    return json.dumps(res.public(per_item=True), sort_keys=True, default=str)


def _judge_some(engine: sa.engine.Engine, run_id: int, mode: str) -> int:
    """Store a verdict for every other question the run's judges are asked (right or wrong letters)."""
    with session_scope(engine) as s:
        loaded = load_run(s, run_id)
        oracle = StoreOracle(s, loaded.items, mode=mode)
        ctx = ScoreContext(mode=mode, run_mode="atomic", oracle=oracle, embedder_factory=HashingEmbedder)
        get_profile("vtc").score(loaded.items, ctx)
        judge = s.get(Judge, 1) or Judge(id=1, name="scripted", template=oracle.pending[0].judge)
        s.add(judge)
        s.flush()
        asked = oracle.pending[::2]
        for n, req in enumerate(asked):
            letter = "B" if n % 3 else "C"
            s.add(
                Verdict(
                    judge_id=judge.id or 0,
                    target_kind=req.target_kind,
                    target_id=req.target_id,
                    target_part=req.target_part,
                    label=letter,
                    parsed={"letters": [letter]},
                    raw_output=letter,
                    prompt_hash=oracle.prompts.build(req)[2],
                )
            )
    return len(asked)


@pytest.mark.parametrize("mode", ["faithful", "fixed"])
@pytest.mark.parametrize("profile", ["agentic-mme", "vtc"])
def test_runs_scored_in_chunks_give_the_whole_runs_result(
    engine: sa.engine.Engine, monkeypatch: pytest.MonkeyPatch, profile: str, mode: str
) -> None:
    run_id = write_run(engine, profile, 24)
    if profile == "vtc":
        assert _judge_some(engine, run_id, mode) > 3
    ranges: list[Any] = []
    real_load = runner.load_run

    def load(session: Any, rid: int, **kw: Any) -> Any:
        ranges.append(kw.get("id_range"))
        return real_load(session, rid, **kw)

    monkeypatch.setattr(runner, "load_run", load)
    monkeypatch.setattr(runner, "CHUNK", 100_000)
    whole = _public(engine, run_id, mode)
    assert ranges == [None]
    if profile == "vtc":
        assert '"judge": "scripted"' in whole  # stored verdicts answered some rows
        assert '"pending_judgements": 0' not in whole  # and the rest wait for a judge
    for size in (5, 23):
        ranges.clear()
        monkeypatch.setattr(runner, "CHUNK", size)
        assert _public(engine, run_id, mode) == whole, size
        assert len(ranges) == -(-24 // size) and None not in ranges  # loaded a chunk at a time


def test_a_question_no_verdict_is_about_is_pending_without_a_prompt_hash(
    engine: sa.engine.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = write_run(engine, "vtc", 6)
    hashed: list[Any] = []
    real_hash = oracle_module.prompt_hash

    def counting_hash(*args: Any) -> str:
        hashed.append(args)
        return real_hash(*args)

    monkeypatch.setattr(oracle_module, "prompt_hash", counting_hash)
    with session_scope(engine) as s:
        loaded = load_run(s, run_id)
        oracle = StoreOracle(s, loaded.items)
        variables = {"question": "q", "options": "A. 1 B. 2 ", "prediction": "two"}
        req = JudgeRequest.make("vtc-mcq-extract", loaded.items[0].trajectory["id"], "answer", variables)
        assert oracle.ask(req) is None
        assert oracle.pending == [req] and hashed == []
        assert "vtc-mcq-extract" in oracle.prompts.templates  # the score still names the prompt it would use
        with pytest.raises(TemplateError, match="prediction"):
            oracle.ask(JudgeRequest.make("vtc-mcq-extract", req.target_id, "answer", {"question": "q", "options": ""}))
        with pytest.raises(LookupError, match="asset 987654"):
            oracle.ask(JudgeRequest.make("amme-visual", req.target_id, "visual:x", {"question": "q"}, [987654]))
        # a question some verdict is about is still matched by its prompt hash
        s.add(Judge(id=1, name="scripted", template="vtc-mcq-extract"))
        s.flush()
        s.add(
            Verdict(
                judge_id=1,
                target_kind="trajectory",
                target_id=req.target_id,
                target_part="answer",
                label="B",
                raw_output="B",
                prompt_hash=oracle.prompts.build(req)[2],
            )
        )
        s.flush()
        hashed.clear()
        answered = StoreOracle(s, loaded.items).ask(req)
        assert answered is not None and answered.raw_output == "B" and len(hashed) == 1
