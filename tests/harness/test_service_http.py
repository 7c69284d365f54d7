"""A run's service calls sent on its event loop (``harness.service_http``): a tool thread waiting on
one is let go when the run stops, and the loop's own thread is refused instead of deadlocking."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from evaluation.harness.service_http import ServiceHttp
from evaluation.modelcall.failures import StatusFailure, TransportFailure
from tests.support.scripted_openai import ScriptedOpenAI, error, text
from tests.tools.conftest import server  # noqa: F401 - the scripted search service

BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own, as a run's is while its tools run on others."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)
    loop.close()


def _on(loop: asyncio.AbstractEventLoop, coro: Any) -> Any:
    return asyncio.run_coroutine_threadsafe(coro, loop).result(30)


def test_a_tool_thread_gets_the_answer_or_the_status_it_failed_with(loop):
    services = ServiceHttp(aiohttp)
    replies = iter([text("fine"), error(503, "overloaded")])
    with ScriptedOpenAI(handler=lambda req: next(replies)) as server:
        url = server.base_url + "/chat/completions"
        answer = services.post(loop, url, {"Authorization": "Bearer k"}, BODY, 10.0)
        with pytest.raises(StatusFailure) as failed:
            services.post(loop, url, {}, BODY, 10.0)
        _on(loop, services.close())
    assert b'"fine"' in answer
    assert failed.value.status == 503 and failed.value.message() == "overloaded"
    assert server.chat_requests()[0].headers["authorization"] == "Bearer k"
    assert "authorization" not in server.chat_requests()[1].headers  # no header leaks from call to call


def test_a_thread_waiting_on_a_service_is_let_go_when_the_run_stops(loop):
    services = ServiceHttp(aiohttp)
    arrived = threading.Event()

    def slow(req):  # type: ignore[no-untyped-def]
        arrived.set()
        return text("too late", delay=120)

    got: dict[str, Any] = {}

    def tool_thread(url: str) -> None:
        try:
            got["answer"] = services.post(loop, url, {}, BODY, 300.0)
        except Exception as exc:  # noqa: BLE001 - what the thread got is the point
            got["error"] = exc

    with ScriptedOpenAI(handler=slow) as server:
        caller = threading.Thread(target=tool_thread, args=(server.base_url + "/chat/completions",))
        caller.start()
        assert arrived.wait(30)
        _on(loop, services.close())
        caller.join(30)
        assert not caller.is_alive(), "the tool thread still waits on a stopped run"
        with pytest.raises(TransportFailure, match="stopped"):
            services.post(loop, server.base_url + "/chat/completions", {}, BODY, 10.0)
    assert "answer" not in got
    assert isinstance(got["error"], TransportFailure) and "stopped" in str(got["error"])


def test_posting_from_the_loops_own_thread_is_refused_not_deadlocked(loop):
    services = ServiceHttp(aiohttp)

    async def from_the_loop() -> str:
        try:
            services.post(asyncio.get_running_loop(), "http://127.0.0.1:9/chat/completions", {}, BODY, 1.0)
        except RuntimeError as exc:
            return str(exc)
        return "posted"

    assert "tool thread" in _on(loop, from_the_loop())


def test_a_search_in_a_run_goes_out_on_the_loop_with_its_key(loop, server, monkeypatch):  # noqa: F811
    """GTA/Agentic-MME search posts through the run's ``http_post``; httpx2 is not used for it."""
    import functools

    import httpx2

    from evaluation.tools import ToolContext, ToolSettings, execute

    def no_httpx2(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the search went through httpx2, not the run's loop")

    monkeypatch.setattr(httpx2, "post", no_httpx2)
    monkeypatch.setenv("CHAINMARK_TEST_SERPER_KEY", "test-serper-key")
    services = ServiceHttp(aiohttp)
    settings = ToolSettings(search_api_key_env="CHAINMARK_TEST_SERPER_KEY", search_base_url=server.url)
    ctx = ToolContext(settings=settings, allow_paths=False, http_post=functools.partial(services.post, loop))
    result = execute("agentic-mme", "google_search", {"query": "fish oil softgels"}, ctx)
    _on(loop, services.close())

    assert result.ok, result.error
    assert result.data["context"].startswith("Answer box: Nature Made Fish Oil")
    assert server.requests[-1]["headers"]["X-API-KEY"] == "test-serper-key"
    assert server.requests[-1]["body"] == {"q": "fish oil softgels", "gl": "us", "hl": "en", "page": 1}
