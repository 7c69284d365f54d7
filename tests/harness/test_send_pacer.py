"""The send pacer: requests go onto the wire one after another, in the order they were made, and a
turn ends as soon as its request is written (never at its answer), when it fails, or when it lapses."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time

import pytest

from evaluation.harness.client import ModelCallError, ModelClient, RetryPolicy
from evaluation.harness.endpoints import EndpointSpec
from evaluation.harness.send_pacer import SendPacer, trace_config
from tests.support.scripted_openai import ScriptedOpenAI, text


def _endpoint(base_url: str) -> EndpointSpec:
    return EndpointSpec(id=1, name="scripted", base_url=base_url, model="scripted-model", api_key_env=None)


def _body(i: int) -> dict:
    return {"model": "scripted-model", "messages": [{"role": "user", "content": f"call {i}"}]}


def test_turns_are_first_come_first_served_and_a_stale_end_is_ignored() -> None:
    async def scenario() -> list[str]:
        pacer, log = SendPacer(), []

        async def take(name: str) -> object:
            token = await pacer.turn()
            log.append(name)
            return token

        first = await take("a")
        waiting = [asyncio.create_task(take(n)) for n in "bcd"]
        await asyncio.sleep(0.01)
        assert log == ["a"]  # the others wait for the turn
        pacer.end(first)
        second = await waiting[0]
        pacer.end(first)  # ending an ended turn again must not end b's
        await asyncio.sleep(0.01)
        assert log == ["a", "b"] and pacer.holder is second
        pacer.end(second)
        pacer.end(await waiting[1])
        pacer.end(await waiting[2])
        assert pacer.holder is None
        return log

    assert asyncio.run(scenario()) == ["a", "b", "c", "d"]


def test_a_turn_nobody_ends_lapses() -> None:
    async def scenario() -> float:
        pacer = SendPacer(max_turn_s=0.05)
        await pacer.turn()  # never ended
        started = time.perf_counter()
        await pacer.turn()
        return time.perf_counter() - started

    assert 0.03 < asyncio.run(scenario()) < 1.0


def test_a_request_whose_turn_lapsed_cannot_end_or_shorten_the_next_turn() -> None:
    async def scenario() -> None:
        pacer = SendPacer(max_turn_s=10, connect_grace_s=0.05)
        config = trace_config(pacer)
        started, written = config.on_request_start[0], config.on_request_chunk_sent[0]
        connecting = config.on_connection_create_start[0]
        late, on_time = config.trace_config_ctx(), config.trace_config_ctx()
        first = await pacer.turn()
        await started(None, late, None)
        pacer.end(first)  # as if the turn had lapsed while the request waited
        second = await pacer.turn()
        await started(None, on_time, None)
        await connecting(None, late, None)
        await written(None, late, None)
        assert pacer.holder is second  # the late request ended nothing
        await connecting(None, on_time, None)  # opening a connection: the turn lapses after the grace
        await asyncio.sleep(0.1)
        assert pacer.holder is None
        third = await pacer.turn()
        await written(None, on_time, None)  # the second request is written after its turn lapsed
        assert pacer.holder is third
        pacer.end(third)

    asyncio.run(scenario())


def test_concurrent_calls_go_out_in_order_and_each_turn_ends_when_its_request_is_written() -> None:
    latency, n = 0.3, 8
    with ScriptedOpenAI(handler=lambda req: text("<answer>ok</answer>"), latency=latency) as server:

        async def scenario() -> tuple[list[float], float, float]:
            client = ModelClient(_endpoint(server.base_url), concurrency=n)
            pacer = client._pacer
            assert pacer is not None, "the aiohttp transport should be paced"
            turn_ends: list[float] = []
            end = pacer.end

            def timed_end(token: object | None) -> None:
                if token is not None and token is pacer.holder:
                    turn_ends.append(time.perf_counter())
                end(token)

            pacer.end = timed_end  # type: ignore[method-assign]
            started = time.perf_counter()
            calls = [asyncio.create_task(client.chat(_body(i))) for i in range(n)]
            replies = await asyncio.gather(*calls)
            took = time.perf_counter() - started
            await client.close()
            assert [r.content for r in replies] == ["<answer>ok</answer>"] * n
            first_answer = started + min(r.latency for r in replies)
            return turn_ends, first_answer, took

        turn_ends, first_answer, took = asyncio.run(scenario())
        received = [r.json["messages"][0]["content"] for r in server.chat_requests()]
    assert received == [f"call {i}" for i in range(n)]  # one after another, in the order they were made
    assert len(turn_ends) == n and max(turn_ends) < first_answer  # every turn ended before any answer came back
    assert took < 2 * latency  # the calls overlapped: only sending is taken in turn


def test_a_refused_connection_ends_its_turn() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket is closed

    async def scenario() -> SendPacer:
        client = ModelClient(_endpoint(f"http://127.0.0.1:{port}/v1"), retry=RetryPolicy(attempts=1, timeout=5))
        with pytest.raises(ModelCallError) as failed:
            await asyncio.wait_for(client.chat(_body(0)), 5)
        assert failed.value.kind == "connection"  # not reported as a timeout: nobody was listening
        assert "refused" in str(failed.value).lower()
        pacer = client._pacer
        assert pacer is not None and pacer.holder is None
        await asyncio.wait_for(pacer.turn(), 0.01)  # free at once, not after the turn would lapse
        await client.close()
        return pacer

    asyncio.run(scenario())


def test_plain_http_endpoints_load_no_certificates() -> None:
    plain = ModelClient(_endpoint("http://127.0.0.1:9/v1"))
    context = plain._ssl
    assert isinstance(context, ssl.SSLContext)
    # trusts nobody, so a redirect to https would fail instead of going unverified
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    secure = ModelClient(_endpoint("https://127.0.0.1:9/v1"))
    assert secure._ssl.cert_store_stats()["x509_ca"] > 0
