"""The HTTP of a run's service tools, sent on the run's event loop.

Service tools (the vision model behind ImageDescription, TextToBbox…) run on threads, and each used
to post through a blocking client: the run's first call imported that client's library and built it
(≈ 0.15 s holding the GIL while every other call waited), and 32 answers arriving together were read
by 32 threads taking turns on the GIL. Here a tool thread hands its request to the run's loop, which
posts it with aiohttp (loaded already for the model's calls) and wakes the thread with the answer.

The session is the services' own: none of the model endpoint's headers, key or connections; a proxy
the environment names is used as the blocking client used it (``wire.env_proxy``). A tool
thread never waits longer than its timeout and a grace period, and a run that stops cancels what is
in flight, so no thread is left waiting on a loop that has gone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ssl
from typing import TYPE_CHECKING, Any

from evaluation.harness.transport import needs_tls, plain_http_tls, post_bytes, tls_context
from evaluation.modelcall.failures import TransportFailure
from evaluation.modelcall.wire import env_proxy

if TYPE_CHECKING:
    import aiohttp

GRACE_S = 30.0  # beyond the request's own timeout, before a waiting tool thread gives up
_STOPPED = "the run stopped before the service answered"


class ServiceHttp:
    """``post(loop, url, headers, body, timeout)`` from a tool thread, sent on ``loop``."""

    def __init__(self, http: Any, pool: int = 100):
        self._http, self._pool = http, pool  # http: the aiohttp module
        self._session: aiohttp.ClientSession | None = None
        self._tls: dict[bool, ssl.SSLContext] = {}
        self._in_flight: set[asyncio.Task[bytes]] = set()
        self._closed = False

    def post(
        self, loop: asyncio.AbstractEventLoop, url: str, headers: dict[str, str], body: bytes, timeout: float
    ) -> bytes:
        """The body of a 2xx/3xx answer (``modelcall.sync_client.Post``); blocks the calling thread,
        which must not be the loop's."""
        if self._closed:
            raise TransportFailure("connection", _STOPPED)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("ServiceHttp.post blocks until the loop answers: call it from a tool thread")
        try:
            future = asyncio.run_coroutine_threadsafe(self._send(url, headers, body, timeout), loop)
        except RuntimeError as exc:  # the loop is closed
            raise TransportFailure("connection", _STOPPED) from exc
        try:
            return future.result(timeout + GRACE_S)
        except concurrent.futures.TimeoutError as exc:
            future.cancel()
            raise TransportFailure("timeout") from exc
        except concurrent.futures.CancelledError as exc:
            raise TransportFailure("connection", _STOPPED) from exc

    async def _send(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> bytes:
        task = asyncio.current_task()
        assert task is not None
        self._in_flight.add(task)
        try:
            if self._closed:
                raise TransportFailure("connection", _STOPPED)
            t = timeout
            proxy = env_proxy(url)
            return await post_bytes(
                self._http,
                self._session or self._open(),
                url,
                body,
                headers=headers,
                ssl=await self._tls_for(url),
                timeout=self._http.ClientTimeout(total=None, connect=t, sock_connect=t, sock_read=t),
                **({"proxy": proxy} if proxy else {}),
            )
        finally:
            self._in_flight.discard(task)

    def _open(self) -> aiohttp.ClientSession:
        connector = self._http.TCPConnector(limit=self._pool, keepalive_timeout=5.0)
        self._session = self._http.ClientSession(connector=connector)
        return self._session

    async def _tls_for(self, url: str) -> ssl.SSLContext:
        """The CA bundle for ``https`` (loaded once, off the loop), else a context that trusts nothing."""
        secure = needs_tls(url)
        context = self._tls.get(secure)
        if context is None:
            made = await asyncio.get_running_loop().run_in_executor(None, tls_context) if secure else plain_http_tls()
            context = self._tls.setdefault(secure, made)
        return context

    async def close(self) -> None:
        """Cancel what is in flight (its threads get a TransportFailure) and close the session."""
        self._closed = True
        if self._in_flight:
            for task in list(self._in_flight):
                task.cancel()
            await asyncio.wait(list(self._in_flight))
        if self._session is not None:
            await self._session.close()
            self._session = None
