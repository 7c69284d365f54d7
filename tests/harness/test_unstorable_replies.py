"""Replies the database cannot store as received (a lone surrogate on any backend, NUL on PostgreSQL)
are stored escaped with a note, through the real harness and a real HTTP server, on SQLite and
PostgreSQL; no trajectory is left ``pending`` with no reason. Plan mode never puts a Python ``set``
into a payload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select, col

from evaluation.harness import RunSpec, start_run
from evaluation.harness.planparse import parse_and_validate
from store import make_engine, session_scope
from store.models import Event, Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tests.support.template_db import copy_sqlite_template
from tests.support.must import must


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        copy_sqlite_template(db_path)
        url = str(db_path)
    else:
        url = request.getfixturevalue("pg_cluster").new_database(migrated=True)
    eng = make_engine(url)
    yield eng
    eng.dispose()


def _only_trajectory(engine: Engine, run_id: int) -> tuple[Trajectory, list[Event]]:
    with session_scope(engine) as s:
        (traj,) = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()
        events = list(s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all())
        return traj, events


@pytest.mark.parametrize("bad", ["\ud800", "\x00", "\udfff\x00"], ids=["surrogate", "nul", "both"])
def test_an_unstorable_reply_is_stored_escaped_with_a_note(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI, bad: str
) -> None:
    make_bench(n=1)
    scripted_openai.push(text(f"<answer>red{bad}</answer>"))
    summary = start_run(engine, blobs, RunSpec("bench", "scripted", "atomic"))
    assert summary.done == 1 and summary.status == "done"
    traj, events = _only_trajectory(engine, summary.run_id)
    assert traj.status == "done"
    pg = engine.dialect.name == "postgresql"
    if "\ud800" in bad or "\udfff" in bad or (pg and "\x00" in bad):
        escaped = bad.replace("\ud800", "\\ud800").replace("\udfff", "\\udfff")
        if pg:
            escaped = escaped.replace("\x00", "\\u0000")
        assert traj.final_answer == f"red{escaped}"
        note = events[-1]
        assert note.kind == "error" and note.payload["type"] == "stored_escaped" and not note.failed
        assert "stored escaped" in note.payload["message"]
    else:  # SQLite stores NUL as it is: nothing to escape, nothing to note
        assert traj.final_answer == f"red{bad}"
        assert all(e.payload.get("type") != "stored_escaped" for e in events)
    assert [e.kind for e in events][:3] == ["user_message", "user_message", "model_message"]


def test_plan_mode_never_puts_a_python_set_in_a_payload(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI
) -> None:
    """A small model echoes the prompt's tag with set-like content: the call is an invalid plan call
    with the reason, the trajectory is stored and done, and every payload is plain JSON."""
    make_bench("atp", tool_set="atp", n=1)
    echoed = 'Plan: <tool>{"tool_name": "Search", "description": "look", "params": {"a", "b"}}</tool> done'
    scripted_openai.push(text(echoed))
    summary = start_run(engine, blobs, RunSpec("atp", "scripted", "plan"))
    assert summary.done == 1 and summary.failed == 0
    traj, events = _only_trajectory(engine, summary.run_id)
    assert traj.status == "done" and traj.error is None
    (call,) = [e for e in events if e.kind == "plan_call"]
    assert call.failed and call.payload["valid"] is False and call.payload["params"] is None
    assert call.payload["error"] == "the <tool> payload is not valid JSON (it holds a Python set)"
    json.dumps([e.payload for e in events])  # plain JSON all the way down


def test_the_plan_parser_keeps_json_and_refuses_python_only_literals() -> None:
    def first(s: str) -> dict:
        return parse_and_validate(f"<tool>{s}</tool>")[0]

    assert first("{'tool_name': 'Search', 'description': 'd', 'params': {'q': ('a', 'b')}}")["params"] == {
        "q": ["a", "b"]
    }  # a tuple reads back as the list JSON has
    for literal, what in (("{'a', 'b'}", "set"), ("b'x'", "bytes"), ("1j", "complex"), ("{1: 2}", "int key")):
        call = first(f"{{'tool_name': 'Search', 'description': 'd', 'params': {{'q': {literal}}}}}")
        assert call["valid"] is False and call["params"] is None
        assert call["error"] == f"the <tool> payload is not valid JSON (it holds a Python {what})"


def test_a_trajectory_that_cannot_be_stored_even_escaped_is_failed_with_the_reason(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI, monkeypatch
) -> None:
    """If escaping does not help either, the row still says ``failed`` and why (never ``pending``)."""
    from evaluation.harness import committer

    make_bench(n=1)
    scripted_openai.push(text("<answer>red</answer>"))
    real = committer.commit_many

    def refuse_events(session, items):  # a row the database refuses whatever we do to its text
        if any(item.recorder.events for item in items):
            raise TypeError("Object of type set is not JSON serializable")
        return real(session, items)

    monkeypatch.setattr(committer, "commit_many", refuse_events)
    summary = start_run(engine, blobs, RunSpec("bench", "scripted", "atomic"))
    assert summary.failed == 1 and summary.done == 0
    traj, events = _only_trajectory(engine, summary.run_id)
    assert traj.status == "failed" and events == []
    assert traj.error == "the trajectory could not be stored: TypeError: Object of type set is not JSON serializable"
    with session_scope(engine) as s:
        assert must(s.get(Run, summary.run_id)).status == "done"  # one bad row is that row's failure, not the run's
