"""The model client: chat calls posted through one aiohttp session per run, our own retries with
backoff, and the replay cache key.

The request is the body's canonical JSON, posted as is to ``chat/completions`` (``modelcall.wire``:
the URL and headers the openai client used, so servers and replay keys see what they saw before);
failures are classed as the openai client classed them (``modelcall.failures``). Not importing
openai saves a run about a second of start-up, and its per-request machinery most of the client's
CPU time per call. aiohttp itself (≈ 0.15 s to import, a quarter of it loading CA certificates) is
imported when a client that posts is made (``load_transport``), not with this module: a run makes
its client while its database thread prepares the trajectories, so the two overlap."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from evaluation.harness.endpoints import EndpointSpec
from evaluation.harness.service_http import ServiceHttp
from evaluation.modelcall.reply import (  # re-exported: the harness's callers name them from here
    RETRYABLE_ERRORS,
    ModelCallError,  # noqa: F401  (re-exported)
    ModelReply,
    ReplayMiss,
    completion_of,
    normalise,
    retry_or_raise,
)
from evaluation.modelcall.retry import RetryNote, RetryPolicy
from evaluation.modelcall.replay_key import canonical, chat_key_of_payload, replay_key
from evaluation.modelcall.wire import chat_url, env_proxy, json_body, request_headers
from evaluation.harness.send_pacer import SendPacer, trace_config
from evaluation.harness.transport import load_transport, needs_tls, plain_http_tls, post_bytes, tls_context

if TYPE_CHECKING:
    import aiohttp

KEEPALIVE_S = 5.0  # how long an idle connection stays open (what the openai client's pool kept)
_BODY_PARAMS_EXCLUDED = {"timeout", "extra_body"}


def data_url_digest(url: str) -> str:
    """An image in a request, named by the sha256 of its bytes (the name the blob store gives it), so
    the cache row says which image was sent without holding it. Not a data URL: the URL's own hash."""
    head, sep, data = url.partition(",")
    if sep and head.startswith("data:") and head.endswith(";base64"):
        try:
            return "sha256:" + hashlib.sha256(base64.b64decode(data, validate=True)).hexdigest()
        except ValueError:
            pass
    return "sha256-url:" + hashlib.sha256(url.encode()).hexdigest()


def _strip_images(value: Any, digest: Callable[[str], str]) -> Any:
    """The request as stored in the cache row: data URLs replaced by their digest (keeps rows small)."""
    if isinstance(value, dict):
        if value.get("type") == "image_url" and isinstance(value.get("image_url"), dict):
            url = value["image_url"].get("url", "")
            if url.startswith("data:"):
                return {"type": "image_url", "image_url": {"url": digest(url)}}
        return {k: _strip_images(v, digest) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_images(v, digest) for v in value]
    return value


def canonical_request(body: Any) -> str:
    """The request as canonical JSON: what was asked, never where or with which key."""
    return canonical(body)


def request_key(body: dict[str, Any]) -> str:
    """The replay-cache key of a chat request (``modelcall.replay_key``)."""
    return replay_key("chat", body)


class _CanonicalEncoder:
    """``canonical_request`` of a body, as bytes, with the JSON of its tool list reused.

    Every call of a run sends the same tool-schema list object (``Episode.tool_schemas``) and its JSON
    is most of a request's (9 of 11 kB for Agentic-MME's tools), so it is encoded once and spliced
    into the top-level object, whose members are encoded in the same sorted order ``json.dumps``
    uses: the bytes are identical. Lists are recognised by identity and never modified once sent."""

    _KEEP = 16

    def __init__(self) -> None:
        self._tools: dict[int, tuple[list[Any], str]] = {}

    def __call__(self, body: dict[str, Any]) -> bytes:
        tools = body.get("tools")
        if not isinstance(tools, list) or not all(isinstance(k, str) for k in body):
            return canonical_request(body).encode()
        known = self._tools.get(id(tools))
        if known is None or known[0] is not tools:
            if len(self._tools) >= self._KEEP:
                self._tools.clear()
            known = self._tools[id(tools)] = (tools, canonical_request(tools))
        members = (
            json.dumps(k, ensure_ascii=False) + ":" + (known[1] if k == "tools" else canonical_request(body[k]))
            for k in sorted(body)
        )
        return ("{" + ",".join(members) + "}").encode()


CacheLookup = Callable[[str], Awaitable[dict[str, Any] | None]]


class ModelClient:
    """Chat calls against one endpoint, or answered from the replay cache in replay mode."""

    def __init__(
        self,
        endpoint: EndpointSpec,
        *,
        replay: bool = False,
        cache_lookup: CacheLookup | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 8,
        tls: Any = None,
    ):
        self.endpoint = endpoint
        self.replay = replay
        self.retry = retry or RetryPolicy()
        self._lookup = cache_lookup
        params = dict(endpoint.params)
        self._timeout = float(params.get("timeout") or self.retry.timeout)
        self._extra_body = params.get("extra_body")
        self._params = {k: v for k, v in params.items() if k not in _BODY_PARAMS_EXCLUDED}
        self._pacer: SendPacer | None = None
        self._session: aiohttp.ClientSession | None = None
        self.services: ServiceHttp | None = None  # the tools' service calls (live runs only)
        self.answered = 0  # calls the endpoint answered (after retries), so far
        self._canonical = _CanonicalEncoder()
        if not replay:
            self._http = load_transport()
            self._url = chat_url(endpoint.base_url)
            self._proxy = env_proxy(self._url)
            self._headers = request_headers(endpoint.api_key())
            self._pool = max(concurrency * 2, 10)
            self._ssl: ssl.SSLContext = (
                tls if tls is not None else (tls_context() if needs_tls(endpoint.base_url) else plain_http_tls())
            )
            self._pacer = SendPacer()
            self.services = ServiceHttp(self._http)

    def _open(self) -> aiohttp.ClientSession:
        """The session, made at the first request (aiohttp wants the running loop). Its requests are
        traced so the pacer knows when one is on the wire (``send_pacer``)."""
        assert self._pacer is not None
        t, http = self._timeout, self._http
        connector = http.TCPConnector(limit=self._pool, keepalive_timeout=KEEPALIVE_S, ssl=self._ssl)
        self._session = http.ClientSession(
            connector=connector,
            headers=self._headers,
            timeout=http.ClientTimeout(total=None, connect=t, sock_connect=t, sock_read=t),
            trace_configs=[trace_config(self._pacer)],
        )
        return self._session

    async def close(self) -> None:
        if self.services is not None:
            await self.services.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def build_body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        **overrides: Any,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages, **self._params, **overrides}
        if tools:
            body["tools"] = tools
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if self._extra_body:
            body["extra_body"] = self._extra_body
        return body

    async def chat(self, body: dict[str, Any], on_retry: Callable[[RetryNote], None] | None = None) -> ModelReply:
        turn = await self._pacer.turn() if self._pacer is not None and not self.replay else None
        try:
            return await self._chat(body, on_retry, turn)
        finally:
            self._end_turn(turn)

    def _end_turn(self, turn: object | None) -> None:
        if self._pacer is not None:
            self._pacer.end(turn)

    async def _chat(
        self, body: dict[str, Any], on_retry: Callable[[RetryNote], None] | None, turn: object | None
    ) -> ModelReply:
        """``turn``: this request's send turn (see ``send_pacer``), taken before its body is built;
        a retry waits for a new one."""
        payload = self._canonical(body)  # the keyed JSON, also sent as the request body
        key = chat_key_of_payload(payload)
        if self.replay:
            cached = await self._lookup(key) if self._lookup else None
            if cached is None:
                raise ReplayMiss(
                    f"replay: no cached model response for request {key[:16]}… "
                    "(run once without --replay to record it)",
                    kind="replay_miss",
                )
            return ModelReply.from_cache(cached, key)
        wire = _wire_body(body, payload)
        attempt = 0
        while True:
            attempt += 1
            if turn is None and self._pacer is not None:
                turn = await self._pacer.turn()
            started = time.perf_counter()
            try:
                completion = completion_of(await self._post(wire), self.endpoint.name)
            except RETRYABLE_ERRORS as exc:
                note = retry_or_raise(exc, self.retry, attempt, self.endpoint.name, self.endpoint.base_url)
                self._note(on_retry, note)
            else:
                reply = normalise(completion, key)
                reply.latency = time.perf_counter() - started
                reply.sends, reply.sent_bytes = attempt, attempt * len(wire)
                self.answered += 1
                return reply
            finally:
                self._end_turn(turn)
                turn = None
            await asyncio.sleep(note.delay)

    async def _post(self, wire: bytes) -> bytes:
        """The body of a 2xx/3xx answer; a ``StatusFailure`` or ``TransportFailure`` otherwise."""
        via = {"proxy": self._proxy} if self._proxy else {}
        return await post_bytes(self._http, self._session or self._open(), self._url, wire, **via)

    @staticmethod
    def _note(cb: Callable[[RetryNote], None] | None, note: RetryNote) -> None:
        if cb is not None:
            cb(note)


def _wire_body(body: dict[str, Any], payload: bytes) -> bytes:
    """The bytes posted: the keyed JSON itself, or with ``extra_body`` merged into the top level
    (serialised as the openai client serialised a body it was given with it)."""
    if not body.get("extra_body"):
        return payload
    send = dict(body)
    extra = send.pop("extra_body")
    return json_body({**send, **extra})


def cacheable_request(
    body: dict[str, Any],
    digest: Callable[[str], str] = data_url_digest,
    tools_name: Callable[[list[Any]], str] | None = None,
) -> dict[str, Any]:
    """What the cache row keeps of the request (images as digests; only messages can hold images).
    ``digest`` may remember digests: a trajectory resends the same images every round. With
    ``tools_name`` the tool list is kept by name too (see ``tools_digest``): it is most of each row
    (10 kB of Agentic-MME's 12, 28 kB for VTC-Bench's tools) and the same in every call."""
    out = dict(body)
    out["messages"] = [_strip_images(m, digest) if isinstance(m.get("content"), list) else m for m in body["messages"]]
    if tools_name is not None and isinstance(body.get("tools"), list):
        out["tools"] = "sha256:" + tools_name(body["tools"])
    return out


def tools_digest(tools: list[Any]) -> str:
    """The name a tool list is kept under in the replay cache: a row of kind ``tools`` whose key is
    this sha256 (of its canonical JSON) and whose response is ``{"tools": [...]}``."""
    return hashlib.sha256(canonical_request(tools).encode()).hexdigest()
