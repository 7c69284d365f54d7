"""The one model-call layer: the same endpoint type, retry policy, replay key and redaction for the
harness, judges, VLM tools and drafting."""

from __future__ import annotations

import pytest

from evaluation.harness.client import _CanonicalEncoder, cacheable_request, data_url_digest, request_key
from evaluation.modelcall.endpoint import EndpointError, EndpointSpec
from evaluation.modelcall.redact import MASK, redact
from evaluation.modelcall.replay_key import chat_key_of_payload, replay_key
from evaluation.modelcall.reply import ModelCallError
from evaluation.modelcall.retry import RetryNote, RetryPolicy
from evaluation.modelcall.sync_client import chat
from evaluation.tools import replay as tool_replay
from tests.support.scripted_openai import error, scripted_openai, text  # noqa: F401  (fixture)

SECRET = "sk-test-0123456789abcdef"


def _endpoint(base_url: str, env: str | None = "CM_MODELCALL_KEY") -> EndpointSpec:
    return EndpointSpec(0, "ep", base_url, "scripted-model", env)


def test_retry_after_is_honoured_and_each_retry_is_reported(scripted_openai, monkeypatch) -> None:
    monkeypatch.setenv("CM_MODELCALL_KEY", SECRET)
    scripted_openai.push(error(429, "slow down", retry_after=7), error(503, "busy"), text("fine"))
    notes: list[RetryNote] = []
    slept: list[float] = []
    reply = chat(
        _endpoint(scripted_openai.base_url),
        [{"role": "user", "content": "hi"}],
        retry=RetryPolicy(attempts=3, base_delay=0.01, max_delay=30),
        on_retry=notes.append,
        sleep=slept.append,
    )
    assert reply.content == "fine"
    assert [(n.attempt, n.status) for n in notes] == [(1, 429), (2, 503)]
    assert slept[0] == 7.0 and slept[1] < 1  # the server's Retry-After, then our own backoff
    sent = [{k.lower(): v for k, v in r.headers.items()}.get("authorization") for r in scripted_openai.chat_requests()]
    assert sent == [f"Bearer {SECRET}"] * 3


def test_a_key_echoed_by_the_server_never_reaches_the_error(scripted_openai, monkeypatch) -> None:
    monkeypatch.setenv("CM_MODELCALL_KEY", SECRET)
    scripted_openai.push(error(401, f"invalid key {SECRET} for Bearer {SECRET}"))
    with pytest.raises(ModelCallError) as caught:
        chat(_endpoint(scripted_openai.base_url), [{"role": "user", "content": "hi"}])
    assert SECRET not in str(caught.value) and MASK in str(caught.value) and "HTTP 401" in str(caught.value)
    assert SECRET not in RetryNote(1, 401, f"echo {SECRET}", 0.0).message


def test_redaction_rules() -> None:
    assert redact("Authorization: Bearer abcdefgh12345678") == f"Authorization: Bearer {MASK}"
    assert redact("key sk-proj-AAAAAAAAAAAA here") == f"key {MASK} here"
    assert redact("nothing secret, sk-1") == "nothing secret, sk-1"


def test_a_missing_key_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("CM_MODELCALL_KEY", raising=False)
    with pytest.raises(EndpointError, match=r"\$CM_MODELCALL_KEY"):
        chat(_endpoint("http://127.0.0.1:9"), [{"role": "user", "content": "hi"}])


def test_one_replay_key_for_every_caller() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}
    encoded = _CanonicalEncoder()(body)
    assert chat_key_of_payload(encoded) == request_key(body) == replay_key("chat", body)
    request = {"model": "vlm", "prompt": "p", "image_sha256": ["ab"]}
    assert tool_replay.request_key("vlm", request) == replay_key("vlm", request)


def test_cached_requests_name_images_by_their_content_hash() -> None:
    import base64
    import hashlib

    data = b"\x89PNG fake image bytes"
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    assert data_url_digest(url) == "sha256:" + hashlib.sha256(data).hexdigest()
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]}
    stored = cacheable_request(body)
    assert stored["messages"][0]["content"][0]["image_url"]["url"] == "sha256:" + hashlib.sha256(data).hexdigest()
