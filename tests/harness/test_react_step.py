"""GTA protocols: ReAct end to end with real tools, and step-by-step with the gold prefix replayed."""

from __future__ import annotations

from sqlmodel import select, col

from annotation import tasks as authoring
from evaluation.harness import RunSpec, start_run
from evaluation.harness.react_protocol import parse
from store import session_scope
from store.models import Event, Trajectory
from tests.support.scripted_openai import text


def _events(engine, run_id):
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).one()
        return traj, s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all()


def test_parser_follows_lagent_rules():
    assert parse("Thought: x\nFinal Answer: 58").final == "58"
    step = parse('Thought: a\nAction: OCR\nAction Input: {}\nAction: Calculator\nAction Input: {"expression": "1+1"}')
    # the last Action line names the tool; Action Input is DOTALL-greedy, so it runs from the first marker
    # to the end, as in the reference parser
    assert (step.kind, step.action) == ("action", "Calculator")
    assert step.action_input == '{}\nAction: Calculator\nAction Input: {"expression": "1+1"}'
    assert parse('Action: OCR\nAction Input: {"image": "a.png"}\n').action_input == '{"image": "a.png"}'
    assert parse("I just talk").kind == "invalid"


def test_react_runs_real_tools_and_ends_on_final_answer(engine, blobs, make_bench, endpoint, scripted_openai):
    make_bench(
        "gta", tool_set="gta", tools_offered=["OCR", "Calculator"], answer={"kind": "whitelist", "groups": [["58"]]}
    )
    scripted_openai.push(
        text('Thought: divide\nAction: Calculator\nAction Input: {"expression": "290 / 5"}'),
        text("Thought: bad\nAction: Calculator\nAction Input: 290/5"),
        text("Thought: I know it\nFinal Answer: 58 days"),
    )
    progress = start_run(engine, blobs, RunSpec("gta", endpoint, "react"))
    traj, evs = _events(engine, progress.run_id)
    assert traj.status == "done" and traj.final_answer == "58 days"
    calls = [e for e in evs if e.kind == "tool_call"]
    results = [e for e in evs if e.kind == "tool_result"]
    assert calls[0].payload["arguments"] == {"expression": "290 / 5"} and not calls[0].failed
    assert results[0].payload["ok"] and results[0].payload["text"].startswith("58")
    assert calls[1].failed and "not a valid JSON object" in results[1].payload["error"]
    reqs = scripted_openai.chat_requests()
    first = reqs[0].json["messages"]
    assert (
        first[0]["role"] == "system" and "Action:the name of the tool, one of [OCR, Calculator]" in first[0]["content"]
    )
    assert first[1]["content"] == "The related files are at `image/image_0_0.png`"
    assert "tools" not in reqs[0].json and reqs[0].images() == []  # GTA models see paths, not pixels
    assert reqs[1].json["messages"][-1] == {
        "role": "system",
        "content": "Response:" + results[0].payload["text"] + "\n",
    }


def test_step_mode_replays_gold_prefix_one_prediction_per_turn(engine, blobs, make_bench, endpoint, scripted_openai):
    [tid] = make_bench("gta", tool_set="gta", tools_offered=["OCR", "Calculator"])
    with session_scope(engine, "tester") as s:
        authoring.add_step(
            s,
            tid,
            thought="read the label",
            tool_name="OCR",
            tool_args={"image": "image/image_0_0.png"},
            result_text="(1, 2, 3, 4) 290 SOFTGELS",
        )
        authoring.add_step(
            s, tid, thought="divide", tool_name="Calculator", tool_args={"expression": "290 / 5"}, result_text="58"
        )
        authoring.add_step(s, tid, final_answer="58")
    scripted_openai.push(
        text('Thought: read\nAction: OCR\nAction Input: {"image": "image/image_0_0.png"}'),
        text("Thought: divide\nAction: Calculator\nAction Input: 290/5"),
        text("Thought: sum up\nFinal Answer: 58"),
    )
    progress = start_run(engine, blobs, RunSpec("gta", endpoint, "step"))
    traj, evs = _events(engine, progress.run_id)
    preds = [e.payload for e in evs if e.kind == "step_prediction"]
    assert [p["gold_index"] for p in preds] == [0, 1, 2]
    assert preds[0]["prediction"]["tool_calls"][0]["function"] == {
        "name": "OCR",
        "arguments": {"image": "image/image_0_0.png"},
    }
    assert preds[1]["prediction"]["error"]["type"] == "ActionInputError"
    assert preds[1]["prediction"]["tool_calls"][0]["function"]["arguments"] == "290/5"
    assert preds[2]["prediction"] == {"role": "assistant", "content": "58"}
    assert not [e for e in evs if e.kind in ("tool_call", "tool_result")]  # nothing executed
    assert traj.final_answer == "58" and traj.status == "done"
    last = scripted_openai.chat_requests()[2].json["messages"]
    assert [m["role"] for m in last] == [
        "system",
        "system",
        "user",
        "assistant",
        "system",
        "assistant",
        "system",
        "user",
    ]
    assert last[3]["content"] == 'Thought:read the label\nAction:OCR\nAction Input:{"image": "image/image_0_0.png"}'
    assert last[4]["content"] == "(1, 2, 3, 4) 290 SOFTGELS"
    assert last[-1]["content"] == "Please summarize the chat history and give a final answer. Do not call any tools."
    assert len(scripted_openai.chat_requests()[0].json["messages"]) == 3
