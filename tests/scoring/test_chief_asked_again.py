"""ATP's chief judge is asked again when its score is missing or off the 0–100 scale (scripted server)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlmodel import select

from store import session_scope
from store.models import ReplayCache, Verdict
from tests.scoring.test_judges import atp_run
from tests.support.scripted_openai import text
from tui.cli import cli

CHECKS = ("necessity", "semantic_position", "structural_integrity", "tool_choice", "parameter_accuracy")
INSPECTORS = (
    text(json.dumps({"calls": [{"index": 0, **{k: True for k in (*CHECKS, "format_correctness")}}]})),
    text(json.dumps({"missed": [], "missed_count": 0})),
)


def judge(db_path: Path, name: str, *extra: str) -> dict:  # type: ignore[type-arg]
    out = CliRunner().invoke(
        cli, ["--db", str(db_path), "judge", "1", "--judge", name, "--endpoint", "judge-ep", "--json", *extra]
    )
    assert out.exit_code == 0, out.output
    return json.loads(out.output)  # type: ignore[no-any-return]


def chief(score: object) -> object:
    return text(json.dumps({"score": score, "tier": "good but flawed", "rationale": "r"}))


def inspected(engine, db_path: Path, server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    assert atp_run(engine, server.base_url) == 1
    server.push(*INSPECTORS)
    judge(db_path, "atp-precision")
    judge(db_path, "atp-recall")


def chief_verdicts(engine) -> list[tuple[str | None, float | None, str | None]]:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        rows = s.exec(select(Verdict).where(Verdict.target_part.contains("chief")).order_by(Verdict.id)).all()  # type: ignore[attr-defined,arg-type]
        return [(v.label, v.score, v.raw_output) for v in rows]


def test_150_then_80_asks_twice_and_stores_80(engine, db_path: Path, scripted_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inspected(engine, db_path, scripted_openai, monkeypatch)
    scripted_openai.push(chief(150), chief(80))
    stats = judge(db_path, "atp-chief")
    assert len(scripted_openai.chat_requests()) == 2 + 2  # the chief was asked twice
    assert stats["model_calls"] == 2 and stats["asked_again"] == 1 and stats["unparsed"] == 1
    assert [(label, score) for label, score, _ in chief_verdicts(engine)] == [
        ("unparsed", None),
        ("good but flawed", 80),
    ]
    score = json.loads(CliRunner().invoke(cli, ["--db", str(db_path), "score", "1", "--json"]).output)
    assert score["metrics"]["FS"] == 80.0 and score["pending_judgements"] == 0
    assert judge(db_path, "atp-chief")["model_calls"] == 0  # answered: a rerun asks nothing
    assert len(scripted_openai.chat_requests()) == 4


def test_a_killed_chief_run_resumes_without_paying_twice(engine, db_path: Path, scripted_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inspected(engine, db_path, scripted_openai, monkeypatch)
    scripted_openai.push(chief(150), chief(80))
    assert judge(db_path, "atp-chief", "--limit", "1")["model_calls"] == 1  # stopped after the first answer
    resumed = judge(db_path, "atp-chief")
    assert resumed["model_calls"] == 1 and resumed["cache_hits"] == 0  # only the second attempt is paid
    assert len(scripted_openai.chat_requests()) == 4
    # A database that lost its verdicts but kept the replay cache is answered from it: the usable reply.
    with session_scope(engine) as s:
        for v in s.exec(select(Verdict).where(Verdict.target_part.contains("chief"))).all():  # type: ignore[attr-defined]
            s.delete(v)
        assert len(s.exec(select(ReplayCache)).all()) == 4
    rebuilt = judge(db_path, "atp-chief")
    assert rebuilt["model_calls"] == 0 and rebuilt["cache_hits"] == 1
    assert [score for _, score, _ in chief_verdicts(engine)] == [80]


def test_after_three_unusable_replies_the_verdict_is_unparsable_and_pending(  # type: ignore[no-untyped-def]
    engine, db_path: Path, scripted_openai, monkeypatch
) -> None:
    inspected(engine, db_path, scripted_openai, monkeypatch)
    scripted_openai.push(chief(150), text('{"tier": "excellent"}'), chief(-5))
    stats = judge(db_path, "atp-chief")
    assert stats["model_calls"] == 3 and stats["unparsed"] == 3
    got = chief_verdicts(engine)
    assert [label for label, _, _ in got] == ["unparsed"] * 3 and '"score": -5' in (got[-1][2] or "")
    assert judge(db_path, "atp-chief")["model_calls"] == 0  # bounded: not asked a fourth time
    score = json.loads(CliRunner().invoke(cli, ["--db", str(db_path), "score", "1", "--json"]).output)
    assert score["pending_judgements"] == 1


def test_the_number_of_attempts_is_a_setting(engine, db_path: Path, scripted_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inspected(engine, db_path, scripted_openai, monkeypatch)
    monkeypatch.setenv("CHAINMARK_JUDGE_ATTEMPTS", "1")
    scripted_openai.push(chief(150))
    assert judge(db_path, "atp-chief")["model_calls"] == 1
    assert [label for label, _, _ in chief_verdicts(engine)] == ["unparsed"]
