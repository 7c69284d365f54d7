"""Replies that nest JSON 100,000 deep (issue 31 item 6): each reply format the harness reads records
an invalid call with the reason, like any bad JSON, and the trajectory goes on to its answer; none
fails as an "internal" error. The other parsers of hostile JSON (judge replies, tool arguments,
ATP plan payloads, error bodies) refuse it the same way."""

from __future__ import annotations

import json

import pytest
from sqlmodel import col, select

from evaluation.harness import RunSpec, start_run
from evaluation.harness.planparse import parse_and_validate
from evaluation.harness.react_protocol import parse_action_input
from evaluation.judges.parsers import extract_json
from evaluation.modelcall.failures import StatusFailure
from evaluation.modelcall.reply import ModelCallError, completion_of
from evaluation.tools.plan import validate_plan_call
from evaluation.tools.registry import ToolError, parse_arguments
from store import safe_json, session_scope
from store.models import Event, Trajectory
from tests.support.scripted_openai import raw, text, tool_calls

DEPTH = 100_000
DEEP_ARRAY = "[" * DEPTH + "]" * DEPTH
DEEP_OBJECT = '{"a":' * DEPTH + "1" + "}" * DEPTH
# through the harness: as deep as fits whole in a reply (the harness keeps the first 200,000 characters)
IN_REPLY = "[" * 90_000 + "]" * 90_000


def _events(engine, run_id):
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).one()
        evs = s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all()
        return traj, list(evs)


def _no_internal_error(evs) -> None:
    assert not [e for e in evs if e.kind == "error" and e.payload.get("type") == "internal"]


@pytest.mark.parametrize("deep", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
def test_safe_loads_refuses_deep_text_as_a_decode_error(deep: str) -> None:
    for doc in (deep, deep.encode()):
        with pytest.raises(json.JSONDecodeError, match="nested more than 100 levels deep"):
            safe_json.loads(doc)


def test_safe_loads_reads_what_json_reads_up_to_the_limit() -> None:
    at_limit = "[" * 100 + "]" * 100
    assert safe_json.loads(at_limit) == json.loads(at_limit)
    brackets_in_strings = json.dumps({"text": "[" * 5000 + "{" * 5000, "n": [[1], {"b": "]]]}}}"}]})
    assert safe_json.loads(brackets_in_strings) == json.loads(brackets_in_strings)
    assert safe_json.loads(b'{"escaped \\" [[[": 1}') == {'escaped " [[[': 1}
    with pytest.raises(json.JSONDecodeError, match="Unterminated string"):  # open string: its own error
        safe_json.loads('["' + "[" * 300)


def test_native_tool_call_arguments_nested_deep_are_an_invalid_call(
    engine, blobs, make_bench, endpoint, scripted_openai
) -> None:
    make_bench("mme")
    scripted_openai.push(tool_calls(("crop", IN_REPLY)), text("It is red. <answer>red</answer>"))
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic"))
    traj, evs = _events(engine, progress.run_id)
    assert traj.status == "done" and traj.final_answer == "red"
    [call] = [e for e in evs if e.kind == "tool_call"]
    [result] = [e for e in evs if e.kind == "tool_result"]
    assert call.failed and call.payload["arguments"] == {}
    assert "not a valid JSON object" in result.payload["error"]
    model = next(e for e in evs if e.kind == "model_message")
    assert model.payload["tool_calls"][0]["parsed"] is None
    _no_internal_error(evs)


def test_a_completion_body_nested_deep_is_a_malformed_reply_not_internal(
    engine, blobs, make_bench, endpoint, scripted_openai
) -> None:
    """A server that sends the arguments as a JSON value 100,000 deep: the body itself cannot be read."""
    make_bench("mme")
    call = '{"id": "c", "type": "function", "function": {"name": "crop", "arguments": ' + DEEP_OBJECT + "}}"
    body = '{"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [' + call + "]}}]}"
    scripted_openai.push(raw(200, body))
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic"))
    traj, evs = _events(engine, progress.run_id)
    assert traj.status == "failed" and "nested more than" in traj.error
    assert [e.payload["type"] for e in evs if e.kind == "error"] == ["malformed"]


def test_react_action_input_nested_deep_is_an_invalid_call(
    engine, blobs, make_bench, endpoint, scripted_openai
) -> None:
    make_bench(
        "gta", tool_set="gta", tools_offered=["OCR", "Calculator"], answer={"kind": "whitelist", "groups": [["58"]]}
    )
    scripted_openai.push(
        text("Thought: deep\nAction: Calculator\nAction Input: " + IN_REPLY),
        text("Thought: I know it\nFinal Answer: 58"),
    )
    progress = start_run(engine, blobs, RunSpec("gta", endpoint, "react"))
    traj, evs = _events(engine, progress.run_id)
    assert traj.status == "done" and traj.final_answer == "58"
    [call] = [e for e in evs if e.kind == "tool_call"]
    [result] = [e for e in evs if e.kind == "tool_result"]
    assert call.failed and "not a valid JSON object" in result.payload["error"]
    _no_internal_error(evs)


def test_step_mode_action_input_nested_deep_is_an_action_input_error(
    engine, blobs, make_bench, endpoint, scripted_openai
) -> None:
    from annotation import tasks as authoring

    [tid] = make_bench("gta", tool_set="gta", tools_offered=["OCR", "Calculator"])
    with session_scope(engine, "tester") as s:
        authoring.add_step(
            s, tid, thought="divide", tool_name="Calculator", tool_args={"expression": "1"}, result_text="1"
        )
        authoring.add_step(s, tid, final_answer="1")
    scripted_openai.push(
        text("Thought: deep\nAction: Calculator\nAction Input: " + IN_REPLY), text("Thought: done\nFinal Answer: 1")
    )
    progress = start_run(engine, blobs, RunSpec("gta", endpoint, "step"))
    traj, evs = _events(engine, progress.run_id)
    first = next(e.payload["prediction"] for e in evs if e.kind == "step_prediction")
    assert first["error"]["type"] == "ActionInputError" and "nested more than" in first["error"]["msg"]
    assert traj.status == "done" and traj.final_answer == "1"
    _no_internal_error(evs)


def test_plan_tool_payload_nested_deep_is_an_invalid_call(engine, blobs, make_bench, endpoint, scripted_openai) -> None:
    make_bench("atp", tool_set="atp", n=1)
    deep = '<tool>{"tool_name": "Search", "description": "x", "params": ' + IN_REPLY + "}</tool>"
    scripted_openai.push(text("Plan: " + deep + " done"))
    progress = start_run(engine, blobs, RunSpec("atp", endpoint, "plan"))
    traj, evs = _events(engine, progress.run_id)
    assert traj.status == "done" and traj.error is None
    [plan] = [e for e in evs if e.kind == "plan_call"]
    assert not plan.payload["valid"] and "nested more than 100 levels deep" in plan.payload["error"]
    _no_internal_error(evs)


@pytest.mark.parametrize("deep", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
def test_every_parser_of_hostile_json_refuses_depth(deep: str) -> None:
    assert parse_action_input(deep)[0] is None
    [call] = parse_and_validate(f'<tool>{{"tool_name": "Search", "params": {deep}}}</tool>')
    assert not call["valid"] and "nested more than" in call["error"]
    with pytest.raises(ValueError, match="nested more than 100 levels deep"):
        extract_json("The verdict: ```json\n" + deep + "\n```")
    with pytest.raises(ToolError, match="not valid JSON"):
        parse_arguments(deep)
    ok, why = validate_plan_call(deep)
    assert not ok and "not valid JSON" in (why or "")
    assert StatusFailure(500, deep.encode()).message() == "Error code: 500"
    with pytest.raises(ModelCallError, match="nested more than"):
        completion_of(deep.encode(), "scripted")
