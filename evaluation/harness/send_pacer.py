"""Requests of a run go onto the wire one after another, each as soon as it can.

Why: the event loop interleaves every coroutine that is ready. When dozens of model replies arrive
together, the workers build and send their next requests in lock step, a little of each in turn,
and all of those requests leave at about the time the last one is ready. One at a time, the first
leaves after one request's worth of work, the second after two, and so on: half the wait on
average (bench_harness, ``-j 32``). The HTTP client reports through aiohttp's request tracing when
a request's body is written, and that ends a turn.

A turn that has to open a connection first keeps it for at most ``connect_grace_s`` more: on
127.0.0.1 connecting takes a fraction of a millisecond and the request still leaves in its turn (if
every connection of a first wave is opened at once, their requests all leave together when the last
one is ready, and their answers come back in one heap); a remote endpoint's handshake is waited
out concurrently instead. A turn also ends when its request fails, and at the latest after
``max_turn_s``, so a stalled request never holds the others back for long.
"""

from __future__ import annotations

import asyncio
from typing import Any

MAX_TURN_S = 0.05
CONNECT_GRACE_S = 0.005


class SendPacer:
    """A FIFO turn per request, from building its body to writing it."""

    def __init__(self, max_turn_s: float = MAX_TURN_S, connect_grace_s: float = CONNECT_GRACE_S):
        self.max_turn_s, self.connect_grace_s = max_turn_s, connect_grace_s
        self._lock = asyncio.Lock()
        self._holder: object | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def turn(self) -> object:
        """Wait for this request's turn; the token ends it (``end``) if the transport does not."""
        await self._lock.acquire()
        token = self._holder = object()
        self._lapse_in(self.max_turn_s)
        return token

    def connecting(self) -> None:
        """The current turn's request opens a connection: the turn lapses after the grace."""
        if self._holder is not None and self._timer is not None:
            remaining = self._timer.when() - asyncio.get_running_loop().time()
            if remaining > self.connect_grace_s:
                self._lapse_in(self.connect_grace_s)

    def _lapse_in(self, seconds: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(seconds, self.end, self._holder)

    @property
    def holder(self) -> object | None:
        return self._holder

    def end(self, token: object | None) -> None:
        """End the turn of ``token``; a no-op if that turn has already ended."""
        if token is None or token is not self._holder:
            return
        self._holder = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._lock.release()


def trace_config(pacer: SendPacer) -> Any:
    """An aiohttp ``TraceConfig`` that ends a request's turn when its body is written, and shortens
    it when the request opens a connection. The turn is the one held when aiohttp starts the request
    (only the holder sends), so a request whose turn has lapsed cannot end the next one's; a failed
    request ends its turn through ``SendPacer.end`` in the caller."""
    import aiohttp

    config = aiohttp.TraceConfig(trace_config_ctx_factory=_TurnOfRequest)

    async def started(session: Any, ctx: _TurnOfRequest, params: Any) -> None:
        ctx.token = pacer.holder

    async def written(session: Any, ctx: _TurnOfRequest, params: Any) -> None:
        pacer.end(ctx.token)

    async def connecting(session: Any, ctx: _TurnOfRequest, params: Any) -> None:
        if ctx.token is not None and ctx.token is pacer.holder:
            pacer.connecting()

    config.on_request_start.append(started)
    config.on_request_chunk_sent.append(written)
    config.on_connection_create_start.append(connecting)
    config.freeze()
    return config


class _TurnOfRequest:
    """aiohttp's per-request trace context: the turn the request was started in."""

    __slots__ = ("token",)

    def __init__(self, trace_request_ctx: Any = None):
        self.token: object | None = None
