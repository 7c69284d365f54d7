"""Atomic and plan modes drive whole trajectories through the scripted server over real HTTP."""

from __future__ import annotations

import io
import json

from PIL import Image
from sqlmodel import select, col

from evaluation.harness import RetryPolicy, RunSpec, start_run
from store import session_scope
from store.models import Asset, Event, EventAsset, ReplayCache, Run, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, error, text, tool_calls
from tests.support.must import must


def events_of(engine, run_id):
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).one()
        evs = s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all()
        return traj, evs


def test_atomic_crop_then_answer(engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI):
    make_bench("mme")
    scripted_openai.push(
        tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 1000]})),
        text("The crop is red. <answer>red</answer>"),
    )
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=1))
    assert (progress.done, progress.failed) == (1, 0)
    traj, evs = events_of(engine, progress.run_id)
    assert traj.status == "done" and traj.final_answer == "red"
    kinds = [e.kind for e in evs]
    assert kinds == [
        "user_message",
        "user_message",
        "model_message",
        "tool_call",
        "tool_result",
        "user_message",
        "model_message",
        "answer",
    ]
    assert evs[0].payload["role"] == "system" and "<answer>" in evs[0].payload["content"]
    assert evs[1].payload["content"][1]["type"] == "image" and evs[1].payload["content"][1]["image_index"] == 0
    call, result = evs[3].payload, evs[4].payload
    assert call["name"] == "crop" and call["arguments"]["bbox_2d"] == [0, 0, 500, 1000]
    assert result["ok"] and result["image_index"] == 1 and len(result["asset_ids"]) == 1
    assert evs[7].payload == {"text": "red", "raw": "The crop is red. <answer>red</answer>", "extracted_by": "tag"}
    assert traj.usage["tool_calls"] == 1 and traj.usage["api_calls"] == 2 and traj.usage["total_tokens"] > 0
    with session_scope(engine) as s:
        asset = s.get(Asset, result["asset_ids"][0])
        crop = Image.open(io.BytesIO(blobs.get(must(asset).sha256)))
        assert crop.size == (50, 80) and crop.getpixel((10, 10)) == (200, 30, 30)
        links = s.exec(select(EventAsset).where(EventAsset.event_id == evs[4].id)).all()
        assert [l.asset_id for l in links] == result["asset_ids"]
    # what went over the wire: tools offered, the tool result and the produced image sent back
    second = scripted_openai.chat_requests()[1].json
    assert {t["function"]["name"] for t in second["tools"]} >= {"crop", "rotate"}
    tool_msg = next(m for m in second["messages"] if m["role"] == "tool")
    assert json.loads(tool_msg["content"])["new_image_index"] == 1
    assert len(scripted_openai.chat_requests()[1].images()) == 2
    assert second["temperature"] == 0


def test_atomic_garbage_is_a_failed_step_and_budget_forces_final_answer(
    engine, blobs, make_bench, endpoint, scripted_openai
):
    make_bench("mme")
    scripted_openai.push(
        tool_calls(("crop", "{not json"), ("teleport", {"x": 1})),
        tool_calls(("rotate", {"image_index": 0, "angle": 90})),
        text("I think it is red"),
    )
    spec = RunSpec("mme", endpoint, "atomic")
    spec.budgets.max_tool_calls = 3
    progress = start_run(engine, blobs, spec)
    traj, evs = events_of(engine, progress.run_id)
    failed_calls = [e for e in evs if e.kind == "tool_call" and e.failed]
    assert [e.payload["name"] for e in failed_calls] == ["crop", "teleport"]
    errors = [e.payload["error"] for e in evs if e.kind == "tool_result" and not e.payload["ok"]]
    assert "not a valid JSON object" in errors[0] and "unknown tool 'teleport'" in errors[1]
    # the budget of 3 calls is used, so the harness asks for the final answer without tools
    last_request = scripted_openai.chat_requests()[-1].json
    assert "tools" not in last_request and "Do not call any tools" in last_request["messages"][-1]["content"]
    answer = evs[-1]
    assert answer.kind == "answer" and answer.failed and answer.payload["extracted_by"] == "raw"
    assert traj.status == "done" and traj.usage["budget_exhausted"] == "tool_calls"


def test_retries_then_replay_offline(engine, blobs, make_bench, endpoint, scripted_openai):
    make_bench("mme")
    scripted_openai.push(error(429, "slow down", retry_after=0), error(503, "busy"), text("<answer>red</answer>"))
    spec = RunSpec("mme", endpoint, "atomic", retry=RetryPolicy(attempts=4, base_delay=0.01))
    first = start_run(engine, blobs, spec)
    traj, evs = events_of(engine, first.run_id)
    assert traj.status == "done" and traj.usage["retries"] == 2
    assert [e.payload["status"] for e in evs if e.kind == "error"] == [429, 503]
    with session_scope(engine) as s:
        cached = s.exec(select(ReplayCache).where(ReplayCache.kind == "model")).all()
        assert len(cached) == 1 and "sk-" not in json.dumps(cached[0].request)
    sent = len(scripted_openai.requests)
    replay = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", replay=True))
    rtraj, revs = events_of(engine, replay.run_id)
    assert len(scripted_openai.requests) == sent  # nothing went over the network
    assert rtraj.final_answer == "red" and rtraj.usage["replayed_calls"] == 1
    assert [e.kind for e in revs] == [e.kind for e in evs if e.kind != "error"]


def test_replay_miss_and_hard_http_error_fail_the_trajectory_not_the_run(
    engine, blobs, make_bench, endpoint, scripted_openai
):
    make_bench("mme", n=2)
    replay = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", replay=True))
    assert (replay.done, replay.failed) == (0, 2)
    scripted_openai.push(error(400, "context too long"), text("<answer>red</answer>"))
    live = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=1))
    assert (live.done, live.failed) == (1, 1)
    with session_scope(engine) as s:
        trajs = s.exec(
            select(Trajectory).where(Trajectory.run_id == live.run_id).order_by(col(Trajectory.task_id))
        ).all()
        assert trajs[0].status == "failed" and "HTTP 400" in trajs[0].error and "context too long" in trajs[0].error
        assert must(s.get(Run, live.run_id)).status == "done"


def test_oversized_reply_is_truncated_and_flagged(engine, blobs, make_bench, endpoint, scripted_openai):
    make_bench("mme")
    scripted_openai.push(text("<answer>red</answer>" + "x" * 2_000_000))
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic"))
    traj, evs = events_of(engine, progress.run_id)
    msg = next(e for e in evs if e.kind == "model_message")
    assert msg.failed and msg.payload["truncated_from"] == 2_000_000 + len("<answer>red</answer>")
    assert len(msg.payload["content"]) == 200_000
    assert any(e.kind == "error" and e.payload["type"] == "oversized_reply" for e in evs)
    assert traj.final_answer == "red"


def test_plan_mode_parses_tool_tags_without_executing(engine, blobs, make_bench, endpoint, scripted_openai):
    ids = make_bench("atp", tool_set="atp", answer={"kind": "none"})
    from annotation import tasks as authoring
    from tests.harness.conftest import png

    with session_scope(engine, "tester") as s:
        doc = authoring.add_document(s, ids[0], "Assemble the shelf: attach panel A to B.", title="Manual")
        authoring.attach_asset(s, blobs, ids[0], png(60, 60, (0, 200, 0)), role="document_image", document_id=doc.id)
    answer = (
        'First attach the panels. <tool>{"tool_name": "Reference", "description": "the manual figure", '
        '"params": {"img_index": 1}}</tool> Then admire it. '
        "<tool>{'tool_name': 'Diffusion', 'description': 'finished shelf', 'params': {'prompt': 'a shelf',}}</tool>"
        ' <tool>{"tool_name": "Teleport", "description": "x", "params": {}}</tool> <tool>oops'
    )
    scripted_openai.push(text(answer))
    progress = start_run(engine, blobs, RunSpec("atp", endpoint, "plan"))
    traj, evs = events_of(engine, progress.run_id)
    plans = [e for e in evs if e.kind == "plan_call"]
    assert [p.payload["tool_name"] for p in plans] == ["Reference", "Diffusion", "Teleport", None]
    assert [p.payload["valid"] for p in plans] == [True, True, False, False]
    assert plans[0].payload["position"] == answer.index("<tool>")
    assert plans[1].payload["params"] == {"prompt": "a shelf"}
    assert traj.final_answer == answer and traj.status == "done"
    sent = scripted_openai.chat_requests()[0]
    assert len(sent.images()) == 2 and "tools" not in sent.json
    user_text = json.dumps(sent.json["messages"][1]["content"])
    assert "Assemble the shelf" in user_text and "img_index 1" in user_text


def test_atomic_mode_on_plan_only_tools_tells_the_model_they_are_never_executed(
    engine, blobs, make_bench, endpoint, scripted_openai
):
    """ATP's tools have no implementation. An executed mode must not crash while deciding whether the
    run needs a sandbox (it did: 'NoneType' has no attribute 'startswith'), and the model's call to a
    plan-only tool comes back as a failed call saying so."""
    make_bench("atp-like", tool_set="atp")
    scripted_openai.push(tool_calls(("Search", {"query": "eiffel tower"})), text("<answer>done</answer>"))
    progress = start_run(engine, blobs, RunSpec("atp-like", endpoint, "atomic", concurrency=1))
    assert (progress.done, progress.failed) == (1, 0)
    traj, evs = events_of(engine, progress.run_id)
    result = next(e for e in evs if e.kind == "tool_result").payload
    assert not result["ok"] and "plan-only tool of the 'atp' set" in result["error"]
    assert traj.final_answer == "done"
