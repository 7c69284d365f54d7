"""A proxy the environment names (HTTP_PROXY, NO_PROXY) is used by the run's model calls and service
calls, as the blocking client (httpx2) and the openai client used it before them. The proxy here is a
scripted server on 127.0.0.1: it gets the request for a host that does not resolve."""

from __future__ import annotations

import asyncio
import functools
import threading

import aiohttp
import pytest

from evaluation.harness.client import ModelClient
from evaluation.harness.service_http import ServiceHttp
from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.modelcall.sync_client import chat
from evaluation.modelcall.wire import env_proxy
from tests.support.scripted_openai import ScriptedOpenAI, text

UNRESOLVABLE = "http://chainmark-proxy-test.invalid/v1"


@pytest.fixture
def proxy(monkeypatch):  # type: ignore[no-untyped-def]
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "direct.invalid,.skip.invalid")
    with ScriptedOpenAI(handler=lambda req: text("via the proxy")) as server:
        monkeypatch.setenv("HTTP_PROXY", server.base_url.rsplit("/v1", 1)[0])
        yield server


def test_which_urls_go_through_the_proxy(proxy):
    assert env_proxy(UNRESOLVABLE + "/chat/completions") == proxy.base_url.rsplit("/v1", 1)[0]
    assert env_proxy("http://direct.invalid/v1/chat/completions") is None
    assert env_proxy("http://api.skip.invalid/v1") is None
    assert env_proxy("https://chainmark-proxy-test.invalid/v1") is None  # no HTTPS_PROXY set


def test_the_runs_model_client_posts_through_the_proxy(proxy):
    endpoint = EndpointSpec(1, "far", UNRESOLVABLE, "m", None)

    async def one_call() -> str:
        client = ModelClient(endpoint, retry=None)
        try:
            reply = await client.chat(client.build_body([{"role": "user", "content": "hi"}]))
        finally:
            await client.close()
        return reply.content or ""

    assert asyncio.run(one_call()) == "via the proxy"
    seen = proxy.chat_requests()
    assert len(seen) == 1 and seen[0].headers["host"] == "chainmark-proxy-test.invalid"


def test_a_runs_service_calls_post_through_the_proxy(proxy):
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    services = ServiceHttp(aiohttp)
    try:
        endpoint = EndpointSpec(0, "the vision model", UNRESOLVABLE, "vlm", None)
        reply = chat(endpoint, [{"role": "user", "content": "hi"}], post=functools.partial(services.post, loop))
    finally:
        asyncio.run_coroutine_threadsafe(services.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
    assert reply.content == "via the proxy"
    assert proxy.chat_requests()[0].headers["host"] == "chainmark-proxy-test.invalid"
