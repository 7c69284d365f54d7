"""A blocking chat call with the one retry policy, the one error shape and redaction: for judges,
the VLM-backed tools and drafting aids, which run on worker threads outside the harness's loop.

One HTTP client per (endpoint URL, key, timeout) for the process, shared by every thread (the
client is thread-safe; building one costs tens of milliseconds of CPU). It posts the JSON body to
``chat/completions`` itself (``modelcall.wire``: the URL, headers and failures the openai client had,
without importing openai). Every retry is ours, spaced by ``RetryPolicy`` (``Retry-After`` honoured)
and reported to ``on_retry`` (default: a warning in the log, redacted).

A caller that already has an HTTP client may hand ``chat`` its own ``Post`` (a run's tools post on
the run's event loop, ``harness.service_http``); the client here is then never built."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.modelcall.failures import StatusFailure, TransportFailure
from evaluation.modelcall.reply import RETRYABLE_ERRORS, ModelReply, completion_of, normalise, retry_or_raise
from evaluation.modelcall.replay_key import replay_key
from evaluation.modelcall.retry import RetryNote, RetryPolicy
from evaluation.modelcall.wire import chat_url, json_body, request_headers

log = logging.getLogger("chainmark.modelcall")

Post = Callable[[str, dict[str, str], bytes, float], bytes]
"""``post(url, headers, body, timeout)``: the body of a 2xx/3xx answer; raises ``StatusFailure`` for
an HTTP error status and ``TransportFailure`` when no answer came."""

_CLIENTS: dict[tuple[str, str, float], "_Client"] = {}
_LOCK = threading.Lock()


class _Client:
    """One endpoint's URL, headers and connection pool."""

    def __init__(self, base_url: str, key: str, timeout: float):
        import httpx2  # not the legacy httpx; imported by the first blocking call (a run may make none)

        self.url, self.headers, self.httpx = chat_url(base_url), request_headers(key), httpx2
        limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
        self.http = httpx2.Client(timeout=timeout, limits=limits, follow_redirects=True)

    def post(self, body: dict[str, Any]) -> bytes:
        """The body of a 2xx/3xx answer; a ``StatusFailure`` or ``TransportFailure`` otherwise."""
        httpx2 = self.httpx
        try:
            response = self.http.post(self.url, content=json_body(body), headers=self.headers)
        except httpx2.TimeoutException as exc:
            raise TransportFailure("timeout") from exc
        except (httpx2.HTTPError, httpx2.InvalidURL, OSError) as exc:
            raise TransportFailure("connection") from exc
        if response.status_code >= 400:
            raise StatusFailure(response.status_code, response.content, response.headers.get("retry-after"))
        return response.content


def _client(endpoint: EndpointSpec, timeout: float) -> _Client:
    key = endpoint.api_key()
    ident = (endpoint.base_url, hashlib.sha256(key.encode()).hexdigest(), timeout)
    with _LOCK:
        client = _CLIENTS.get(ident)
        if client is None:
            client = _CLIENTS[ident] = _Client(endpoint.base_url, key, timeout)
        return client


def _sender(post: Post, endpoint: EndpointSpec, timeout: float) -> Callable[[dict[str, Any]], bytes]:
    """A body sender over ``post``, with the URL and headers this module's client would use."""
    url, headers = chat_url(endpoint.base_url), request_headers(endpoint.api_key())

    def send(body: dict[str, Any]) -> bytes:
        return post(url, headers, json_body(body), timeout)

    return send


def _log_retry(endpoint: EndpointSpec) -> Callable[[RetryNote], None]:
    def note(n: RetryNote) -> None:
        log.warning(
            "retry %d of a call to %s in %.1f s: %s%s",
            n.attempt,
            endpoint.name,
            n.delay,
            f"HTTP {n.status} " if n.status else "",
            n.message,
        )

    return note


def chat(
    endpoint: EndpointSpec,
    messages: list[dict[str, Any]],
    *,
    params: dict[str, Any] | None = None,
    retry: RetryPolicy | None = None,
    on_retry: Callable[[RetryNote], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    post: Post | None = None,
) -> ModelReply:
    """One chat completion of ``endpoint.model`` on ``messages``; raises ``ModelCallError`` (redacted)
    once the policy gives up or on an error not worth retrying. ``post`` sends it instead of this
    module's client."""
    retry = retry or RetryPolicy(attempts=3)
    body = {"model": endpoint.model, "messages": messages, **(params or {})}
    key = replay_key("chat", body)
    timeout = float((params or {}).get("timeout") or retry.timeout)
    body.pop("timeout", None)
    send = _client(endpoint, timeout).post if post is None else _sender(post, endpoint, timeout)
    on_retry = on_retry or _log_retry(endpoint)
    attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            completion = completion_of(send(body), endpoint.name)
        except RETRYABLE_ERRORS as exc:
            note = retry_or_raise(exc, retry, attempt, endpoint.name, endpoint.base_url)
            on_retry(note)
        else:
            reply = normalise(completion, key)
            reply.latency = time.perf_counter() - started
            return reply
        sleep(note.delay)
