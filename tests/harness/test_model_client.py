"""The chat client the harness and the blocking callers post through (no openai library): the bytes
it sends and the keys it caches under are the ones the openai-based client produced (hashes recorded
from it), and each way a call can fail lands in the category the harness recorded before, over real
HTTP on 127.0.0.1, for both the harness's async client and the blocking one."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import socket
from collections.abc import Callable
from typing import Any

import pytest

from evaluation.harness.client import ModelClient
from evaluation.modelcall import sync_client
from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.modelcall.redact import MASK
from evaluation.modelcall.reply import ModelCallError, ModelReply
from evaluation.modelcall.retry import RetryNote, RetryPolicy
from evaluation.modelcall.wire import chat_url
from tests.support.raw_http import RawHTTP, completion
from tests.support.scripted_openai import Reply, ScriptedOpenAI, error, raw, text

SECRET = "sk-golden-0123456789"
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n golden image bytes").decode()
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "crop",
            "description": "Crop an image: é ☃",
            "parameters": {
                "type": "object",
                "properties": {
                    "image_index": {"type": "integer"},
                    "bbox_2d": {"type": "array", "items": {"type": "number"}},
                },
                "required": ["image_index", "bbox_2d"],
            },
        },
    }
]
CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "crop", "arguments": '{"image_index": 0, "bbox_2d": [0, 0, 5, 5]}'},
}
# (messages, tools, tool_choice, endpoint params) → (replay key, sha256 of the body on the wire, its
# length), as the openai-based client (AsyncOpenAI.post on its aiohttp transport) produced them.
GOLDEN: dict[str, tuple[Any, ...]] = {
    "text": (
        [{"role": "system", "content": "You answer."}, {"role": "user", "content": "What colour? «rouge» ☃"}],
        None,
        None,
        {},
        "eac59e4dc654a58de50aa80fb553ec834075b857895c7f36fa0eb97b9f66db3c",
        "bb1b5ffc737bc5f8703079173e1d7bd44b5c6e2a3cc315255ba0dc019b2f819a",
        136,
    ),
    "image": (
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is shown?"},
                    {"type": "image_url", "image_url": {"url": PNG}},
                ],
            }
        ],
        None,
        None,
        {},
        "22ef072807b7712e341277a321c4da059c461971b17bb253ef233ccfcc59e20e",
        "3bf282d8b1952e189b080cbaa6849c2bbfa188bdab2bd999fa32741991678562",
        209,
    ),
    "tools": (
        [
            {"role": "user", "content": "Crop it."},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_0", "content": "[image](image/crop_1.png)"},
        ],
        TOOLS,
        "auto",
        {},
        "8b0897e99006b20d82363495cb84263f1b482d5b943dafd9f28f80b4f8e1ea6a",
        "980a53d7ed74749b5a910cda0ebe945625cb2daf5255e2d5144650a095dcde6f",
        613,
    ),
    "extra_body": (  # extra_body merged into the top level of what is sent, not of what is keyed
        [{"role": "user", "content": "hi"}],
        TOOLS,
        {"type": "function", "function": {"name": "crop"}},
        {"temperature": 0.2, "max_tokens": 64, "extra_body": {"top_k": 5, "chat_template_kwargs": {"thinking": False}}},
        "9fa07a79b2ee2c3bdddf4b714e451e20b008c5690c9f894ec68c7fd818929d34",
        "5176be4bc528890126a4689743365000a967a744b3b3064cd0defb2895c73f4b",
        481,
    ),
}


@pytest.mark.parametrize("name", list(GOLDEN))
def test_requests_are_the_bytes_and_keys_the_openai_client_produced(name: str, monkeypatch) -> None:
    messages, tools, choice, params, key, body_sha, size = GOLDEN[name]
    monkeypatch.setenv("CM_GOLDEN_KEY", SECRET)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-golden")
    with RawHTTP(completion("fine")) as server:

        async def call() -> ModelReply:
            client = ModelClient(EndpointSpec(1, "e", server.base_url, "scripted-model", "CM_GOLDEN_KEY", params))
            try:
                return await client.chat(client.build_body(messages, tools, choice))
            finally:
                await client.close()

        reply = asyncio.run(call())
    (sent,) = server.requests
    assert (reply.content, reply.cache_key) == ("fine", key)
    assert (hashlib.sha256(sent.body).hexdigest(), len(sent.body), reply.sent_bytes) == (body_sha, size, size)
    assert sent.request_line == "POST /v1/chat/completions HTTP/1.1"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"  # the key is there and nowhere else
    assert [k for k, v in sent.headers.items() if SECRET in v] == ["authorization"]
    assert (sent.headers["content-type"], sent.headers["accept"]) == ("application/json", "application/json")
    assert sent.headers["openai-organization"] == "org-golden"  # as the openai client read it from the env


def test_the_url_is_joined_as_the_openai_client_joined_it() -> None:
    assert chat_url("http://h:8000/v1") == "http://h:8000/v1/chat/completions"
    assert chat_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert chat_url("https://h/api/openai/v1") == "https://h/api/openai/v1/chat/completions"
    assert chat_url("http://h") == "http://h/chat/completions"  # no /v1 is added
    assert chat_url("http://h/v1//") == "http://h/v1//chat/completions"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _async_call(base_url: str, policy: RetryPolicy, notes: list[RetryNote]) -> ModelReply:
    async def call() -> ModelReply:
        client = ModelClient(EndpointSpec(1, "ep", base_url, "scripted-model", "CM_GOLDEN_KEY"), retry=policy)
        try:
            return await client.chat(client.build_body([{"role": "user", "content": "hi"}]), notes.append)
        finally:
            await client.close()

    return asyncio.run(call())


def _sync_call(base_url: str, policy: RetryPolicy, notes: list[RetryNote]) -> ModelReply:
    endpoint = EndpointSpec(1, "ep", base_url, "scripted-model", "CM_GOLDEN_KEY")
    return sync_client.chat(
        endpoint, [{"role": "user", "content": "hi"}], retry=policy, on_retry=notes.append, sleep=lambda s: None
    )


CLIENTS = {"harness": _async_call, "blocking": _sync_call}
Caller = Callable[[str, RetryPolicy, list[RetryNote]], ModelReply]

# replies → (kind, status, attempts, message after "<what> from/talking to ep…"); two attempts allowed
SCRIPTED: dict[str, tuple[list[Reply], str, int | None, int, str]] = {
    "5xx JSON error, retried": ([error(500, "boom"), error(502, "still")], "http", 502, 2, "HTTP 502 from ep: still"),
    "4xx not retried": ([error(422, "bad tool schema")], "http", 422, 1, "HTTP 422 from ep: bad tool schema"),
    "4xx with a body that is not JSON": ([raw(404, "<html>no</html>")], "http", 404, 1, "Error code: 404"),
    "5xx without a message": ([raw(503, ""), raw(500, {"error": "text"})], "http", 500, 2, "Error code: 500"),
    "200 that is not JSON": ([raw(200, "not json")], "malformed", None, 1, "is not JSON: 'not json'"),
    "200 without choices": ([raw(200, {"id": "x"})], "malformed", None, 1, "without any choice"),
    "too slow": ([text("late", delay=0.6), text("late", delay=0.6)], "timeout", None, 2, "after 2 attempts"),
}


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("case", list(SCRIPTED))
def test_each_failure_lands_in_its_category(client: str, case: str, monkeypatch) -> None:
    replies, kind, status, attempts, message = SCRIPTED[case]
    monkeypatch.setenv("CM_GOLDEN_KEY", SECRET)
    policy = RetryPolicy(attempts=2, base_delay=0.01, timeout=0.3)
    notes: list[RetryNote] = []
    with ScriptedOpenAI() as server:
        server.push(*replies)
        with pytest.raises(ModelCallError) as failed:
            CLIENTS[client](server.base_url, policy, notes)
        sent = len(server.chat_requests())
    assert (failed.value.kind, failed.value.status, failed.value.attempts) == (kind, status, attempts)
    assert message in str(failed.value)
    assert sent == attempts and len(notes) == attempts - 1
    if notes:
        assert (notes[0].status, notes[0].message) == (
            (replies[0].status, "boom" if case.startswith("5xx JSON") else "Error code: 503")
            if kind == "http"
            else (None, kind)
        )


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_retry_after_then_success_is_one_reply_and_one_note(client: str, monkeypatch) -> None:
    monkeypatch.setenv("CM_GOLDEN_KEY", SECRET)
    notes: list[RetryNote] = []
    with ScriptedOpenAI() as server:
        server.push(error(429, f"slow down, {SECRET}", retry_after=0.05), text("fine"))
        reply = CLIENTS[client](server.base_url, RetryPolicy(attempts=3, base_delay=5, max_delay=30), notes)
    assert reply.content == "fine"
    assert [(n.attempt, n.status, n.delay) for n in notes] == [(1, 429, 0.05)]  # the server's delay, not 5 s
    assert notes[0].message == f"slow down, {MASK}"  # an echoed key never reaches the trajectory


CONNECTION_FAILURES: dict[str, tuple[bytes | None, dict[str, str], str]] = {
    # nobody listens: "connection" (a run stops early on it), with the OS's reason
    "refused": (None, {"harness": "connection", "blocking": "connection"}, "Connection refused"),
    # listening, then the connection dropped without an answer: the openai client on aiohttp called
    # that a timeout, on httpx2 a connection error; each client keeps its category
    "dropped": (b"", {"harness": "timeout", "blocking": "connection"}, "talking to ep"),
    # the body ends before its Content-Length
    "cut short": (
        b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"choi',
        {"harness": "connection", "blocking": "connection"},
        "connection talking to ep",
    ),
    # not an HTTP answer at all (the openai client on aiohttp crashed on this one)
    "not HTTP": (b"garbage\r\n\r\n", {"harness": "connection", "blocking": "connection"}, "connection talking"),
}


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("case", list(CONNECTION_FAILURES))
def test_connection_failures_land_in_their_category(client: str, case: str, monkeypatch) -> None:
    answer, kinds, message = CONNECTION_FAILURES[case]
    monkeypatch.setenv("CM_GOLDEN_KEY", SECRET)
    notes: list[RetryNote] = []
    policy = RetryPolicy(attempts=2, base_delay=0.01, timeout=5)
    if answer is None:
        with pytest.raises(ModelCallError) as failed:
            CLIENTS[client](f"http://127.0.0.1:{_closed_port()}/v1", policy, notes)
        sent = 2
    else:
        with RawHTTP(answer) as server, pytest.raises(ModelCallError) as failed:
            CLIENTS[client](server.base_url, policy, notes)
        sent = len(server.requests)
    kind = kinds[client]
    assert (failed.value.kind, failed.value.status, failed.value.attempts, sent) == (kind, None, 2, 2)
    assert message in str(failed.value) and [(n.status, n.message) for n in notes] == [(None, kind)]
