"""Produced images are encoded on background threads as each tool call returns; a run still sends
exactly the bytes a synchronous encode makes, and an encode that fails fails the trajectory with
its reason instead of sending a request without the image."""

from __future__ import annotations

import base64

import pytest
from sqlmodel import select

from evaluation.harness import RunSpec, start_run
from evaluation.tools import ToolContext, execute
from evaluation.tools import images as images_mod
from store import session_scope
from store.models import Trajectory
from tests.harness.conftest import png
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

CROP = ("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 1000], "zoom_scale": 2})
ROTATE = ("rotate", {"image_index": 0, "angle": 30})
ENHANCE = ("enhance", {"image_index": 1, "contrast": 1.5})


def sent_images(request) -> list[bytes]:  # type: ignore[no-untyped-def]
    return [base64.b64decode(url.split(",", 1)[1]) for url in request.images()]


def test_a_run_sends_the_bytes_of_a_synchronous_encode(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme")
    scripted_openai.push(tool_calls(CROP, ROTATE), tool_calls(ENHANCE), text("<answer>red</answer>"))
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=1))
    assert (progress.done, progress.failed) == (1, 0)

    # the same three calls, each result's bytes encoded in line as soon as it returns
    task_image = png(100, 80)
    ctx = ToolContext(images=[task_image])
    expected = [task_image]
    for name, args in (CROP, ROTATE, ENHANCE):
        result = execute("agentic-mme", name, args, ctx)
        assert result.ok, result.error
        expected += result.images
    requests = scripted_openai.chat_requests()
    assert [sent_images(r) for r in requests] == [expected[:1], expected[:3], expected]


def test_an_encode_that_fails_fails_the_trajectory_and_sends_nothing_more(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(arr):  # type: ignore[no-untyped-def]
        raise RuntimeError("the encoder broke")

    monkeypatch.setattr(images_mod, "encode_png", broken)
    make_bench("mme")
    scripted_openai.push(tool_calls(CROP), text("<answer>red</answer>"))
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=1))
    assert (progress.done, progress.failed) == (0, 1)
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).one()
    assert traj.status == "failed" and "the encoder broke" in (traj.error or "")
    assert len(scripted_openai.chat_requests()) == 1  # no request went out without the image
