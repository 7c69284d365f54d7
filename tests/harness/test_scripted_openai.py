"""The scripted server behaves like an OpenAI-compatible endpoint for the real ``openai`` client."""

from __future__ import annotations

import json

import openai
import pytest

from tests.support.scripted_openai import ScriptedOpenAI, error, raw, text, tool_calls
from tests.support.must import must


def client(server: ScriptedOpenAI, retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=retries)


def test_text_and_tool_calls_round_trip_and_requests_are_recorded(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(tool_calls(("crop", {"image_index": 0})), text("<answer>7</answer>"))
    c = client(scripted_openai)
    first = c.chat.completions.create(
        model="m",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            }
        ],
    )
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "crop" and json.loads(call.function.arguments) == {"image_index": 0}
    assert first.choices[0].finish_reason == "tool_calls"
    second = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
    assert second.choices[0].message.content == "<answer>7</answer>"
    assert must(second.usage).total_tokens == must(second.usage).prompt_tokens + must(second.usage).completion_tokens
    reqs = scripted_openai.chat_requests()
    assert len(reqs) == 2 and reqs[0].images() == ["data:image/png;base64,AAAA"]
    assert reqs[0].headers["authorization"] == "Bearer sk-test"


def test_models_endpoint(scripted_openai: ScriptedOpenAI) -> None:
    assert [m.id for m in client(scripted_openai).models.list()] == ["scripted-model"]


def test_errors_are_http_errors_and_client_retries_see_them(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(error(429, "slow down", retry_after=0), text("ok"))
    assert (
        client(scripted_openai, retries=1)
        .chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        .choices[0]
        .message.content
        == "ok"
    )
    assert len(scripted_openai.chat_requests()) == 2
    scripted_openai.push(error(500, "boom"))
    with pytest.raises(openai.InternalServerError):
        client(scripted_openai).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_exhausted_script_is_a_clear_400(scripted_openai: ScriptedOpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="script exhausted"):
        client(scripted_openai).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_handler_latency_and_huge_reply() -> None:
    big = "x" * 2_000_000
    with ScriptedOpenAI(handler=lambda req: big, latency=0.05) as server:
        reply = client(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert reply.choices[0].message.content == big
        assert server.requests[-1].received_at > 0


def test_raw_body_for_malformed_completions(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(raw(200, {"choices": []}))
    reply = client(scripted_openai).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert reply.choices == []
