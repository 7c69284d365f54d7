"""A blocking chat call with the one retry policy, the one error shape and redaction: for judges,
the VLM-backed tools and drafting aids, which run on worker threads outside the harness's loop.

One openai client per (endpoint URL, key, timeout) for the process, shared by every thread (the
client is thread-safe; building one costs tens of milliseconds of CPU). Its own retries are off:
every retry is ours, spaced by ``RetryPolicy`` (``Retry-After`` honoured) and reported to
``on_retry`` (default: a warning in the log, redacted)."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

# openai's own HTTP library, already loaded with openai. Never the legacy ``httpx``: openai looks it
# up in sys.modules on every request, so importing it on one thread while another thread (or the
# harness's loop) is mid-request hands that request a half-initialised module ("partially
# initialized module 'httpx' has no attribute 'Timeout'"): concurrent service tools failed so.
import httpx2

from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.modelcall.reply import RETRYABLE_ERRORS, ModelReply, completion_of, normalise, retry_or_raise
from evaluation.modelcall.replay_key import replay_key
from evaluation.modelcall.retry import RetryNote, RetryPolicy

log = logging.getLogger("chainmark.modelcall")

_CLIENTS: dict[tuple[str, str, float], Any] = {}
_LOCK = threading.Lock()


def _client(endpoint: EndpointSpec, timeout: float) -> Any:
    key = endpoint.api_key()
    ident = (endpoint.base_url, hashlib.sha256(key.encode()).hexdigest(), timeout)
    with _LOCK:
        client = _CLIENTS.get(ident)
        if client is None:
            import openai

            client = _CLIENTS[ident] = openai.OpenAI(
                base_url=endpoint.base_url, api_key=key, timeout=timeout, max_retries=0
            )
        return client


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
) -> ModelReply:
    """One chat completion of ``endpoint.model`` on ``messages``; raises ``ModelCallError`` (redacted)
    once the policy gives up or on an error not worth retrying."""
    retry = retry or RetryPolicy(attempts=3)
    body = {"model": endpoint.model, "messages": messages, **(params or {})}
    key = replay_key("chat", body)
    client = _client(endpoint, float((params or {}).get("timeout") or retry.timeout))
    body.pop("timeout", None)
    on_retry = on_retry or _log_retry(endpoint)
    attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            completion = completion_of(
                client.post("/chat/completions", cast_to=httpx2.Response, body=body), endpoint.name
            )
        except RETRYABLE_ERRORS as exc:
            note = retry_or_raise(exc, retry, attempt, endpoint.name, endpoint.base_url)
            on_retry(note)
        else:
            reply = normalise(completion, key)
            reply.latency = time.perf_counter() - started
            return reply
        sleep(note.delay)
