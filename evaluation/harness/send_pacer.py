"""Requests of a run go onto the wire one after another, each as soon as it can.

Why: the event loop interleaves every coroutine that is ready. When dozens of model replies arrive
together, the workers build and send their next requests in lock step, a little of each in turn,
and all of those requests leave at about the time the last one is ready. One at a time, the first
leaves after one request's worth of work, the second after two, and so on: half the wait on
average (bench_harness, ``-j 32``). The HTTP client reports through aiohttp's request tracing when
a request's body is written, and that ends a turn.

A turn also ends when its request needs a new connection (connecting is waiting on the network,
not work), when the request fails, and at the latest after ``max_turn_s``, so a stalled request
never holds the others back for long.
"""

from __future__ import annotations

import asyncio
from typing import Any

MAX_TURN_S = 0.05


class SendPacer:
    """A FIFO turn per request, from building its body to writing it."""

    def __init__(self, max_turn_s: float = MAX_TURN_S):
        self.max_turn_s = max_turn_s
        self._lock = asyncio.Lock()
        self._holder: object | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def turn(self) -> object:
        """Wait for this request's turn; the token ends it (``end``) if the transport does not."""
        await self._lock.acquire()
        token = self._holder = object()
        self._timer = asyncio.get_running_loop().call_later(self.max_turn_s, self.end, token)
        return token

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
    """An aiohttp ``TraceConfig`` that ends the current turn when a request body is written or a
    request needs a new connection. Only the turn's holder sends meanwhile, so the current turn is
    that request's; a failed request ends its turn through ``SendPacer.end`` in the caller."""
    import aiohttp

    config = aiohttp.TraceConfig()

    async def over(session: Any, ctx: Any, params: Any) -> None:
        pacer.end(pacer.holder)

    config.on_request_chunk_sent.append(over)
    config.on_connection_create_start.append(over)
    config.freeze()
    return config
