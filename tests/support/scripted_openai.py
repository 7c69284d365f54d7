"""A real OpenAI-compatible HTTP server on 127.0.0.1 whose answers each test scripts.

Why: the harness, the judges and the TUI must be tested through real HTTP and the real ``openai``
client, not a patched client. This server speaks enough of the Chat Completions API for that
(``POST /v1/chat/completions``, ``GET /v1/models``), records every request it receives so tests can
assert what was sent (prompts, images, tools), and replies from a script: a queue of replies, a
function of the request, or both (the queue is used first).

Use it from any test module or conftest::

    from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls, error, scripted_openai

    def test_x(scripted_openai):                     # the fixture (import it into your conftest)
        scripted_openai.push(tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 500]})),
                             text("<answer>42</answer>"))
        client = openai.OpenAI(base_url=scripted_openai.base_url, api_key="k")
        ...
        assert scripted_openai.requests[0].json["messages"][0]["role"] == "system"

    with ScriptedOpenAI(handler=lambda req: text("hi"), latency=0.2) as server:   # no pytest needed
        ...

Replies: ``text(content)``, ``tool_calls((name, args), ...)`` (``args`` a dict, or a str sent as is
so tests can send broken JSON), ``error(status, message, retry_after=None)``, ``raw(status, body)``;
each takes ``delay=`` seconds and ``usage=`` overrides. A handler may also return a plain ``str``
(assistant text) or a ``Reply``. When no reply is left and there is no handler the server answers
400 ("script exhausted") so a test fails clearly instead of hanging or being retried.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

MODEL_ID = "scripted-model"
MAX_REQUEST_BYTES = 512 * 1024 * 1024  # requests carry base64 images; never refuse one for size


@dataclass
class Reply:
    """One scripted HTTP answer. ``body`` None means: build a chat completion from the other fields."""

    status: int = 200
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass
class Request:
    """What the server received: method, path, headers and the decoded JSON body (None for GET)."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    received_at: float
    size: int = 0  # bytes of the request body

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.json or {}).get("messages") or [])

    def images(self) -> list[str]:
        """Every ``image_url`` URL in the request's messages, in order (data URLs included)."""
        urls = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "image_url":
                        urls.append(part["image_url"]["url"])
        return urls


def text(
    content: str,
    *,
    reasoning: str | None = None,
    delay: float = 0.0,
    usage: dict[str, int] | None = None,
    finish_reason: str = "stop",
) -> Reply:
    return Reply(content=content, reasoning=reasoning, delay=delay, usage=usage, finish_reason=finish_reason)


def tool_calls(
    *calls: tuple[str, Any], content: str | None = None, delay: float = 0.0, usage: dict[str, int] | None = None
) -> Reply:
    """Native tool calls; each ``(name, args)`` with args a dict (JSON-encoded) or a raw string."""
    out = []
    for i, (name, args) in enumerate(calls):
        arguments = args if isinstance(args, str) else json.dumps(args)
        out.append({"id": f"call_{i}_{name}", "type": "function", "function": {"name": name, "arguments": arguments}})
    return Reply(content=content, tool_calls=out, delay=delay, usage=usage, finish_reason="tool_calls")


def error(
    status: int, message: str = "scripted error", *, retry_after: float | None = None, delay: float = 0.0
) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(
        status=status,
        delay=delay,
        headers=headers,
        body={"error": {"message": message, "type": "scripted", "code": status}},
    )


def raw(status: int, body: Any, *, delay: float = 0.0) -> Reply:
    """Any body (dict → JSON, str → sent verbatim), e.g. a malformed completion."""
    return Reply(status=status, body=body, delay=delay)


Handler = Callable[[Request], "Reply | str | None"]


class ScriptedOpenAI:
    """The server. Start with ``start()`` or as a context manager; ``base_url`` ends in ``/v1``.

    It runs on an asyncio loop in one background thread (aiohttp): waiting out ``latency`` costs no
    thread per request, so dozens of concurrent calls see the latency they were scripted with (a
    thread-per-connection server added tens of milliseconds per wave at ``-j 32``, bench_harness).
    ``latency`` (and a reply's ``delay``) counts from the moment the request reached the handler;
    the answer is built before the wait, so the server's own work is inside it.
    ``handler`` is called on that loop, so it must answer at once; delays belong in the reply."""

    def __init__(self, handler: Handler | None = None, *, latency: float = 0.0, model: str = MODEL_ID):
        self.handler = handler
        self.latency = latency
        self.model = model
        self.requests: list[Request] = []
        self._queue: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- scripting

    def push(self, *replies: Reply | str) -> "ScriptedOpenAI":
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def chat_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        assert self._port is not None, "server not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, port: int = 0, *, reuse_port: bool = False) -> "ScriptedOpenAI":
        """Listen on ``port`` (0: any free one). ``reuse_port`` lets several server processes share
        one port (Linux spreads the connections), so a benchmark's server is not its bottleneck."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", port))
        self._port = sock.getsockname()[1]
        loop = asyncio.new_event_loop()
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{path:.*}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.2)
        # The server is set up on its own thread's loop: the caller may be inside a running loop
        # (an async test, a Textual app), where run_until_complete is not allowed.
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="scripted-openai", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(sock), loop).result(timeout=10)
        return self

    async def _listen(self, sock: socket.socket) -> None:
        assert self._runner is not None
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()

    def stop(self) -> None:
        loop, runner, thread = self._loop, self._runner, self._thread
        if loop is None or runner is None or thread is None:
            return
        self._loop = self._runner = self._thread = None
        try:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            if not thread.is_alive():
                loop.close()

    def __enter__(self) -> "ScriptedOpenAI":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -------------------------------------------------------------- answering

    def _next_reply(self, request: Request) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        if queued is None and self.handler is not None:
            queued = self.handler(request)
        if queued is None:
            return error(400, f"scripted server: script exhausted at request {len(self.requests)}")
        return Reply(content=queued) if isinstance(queued, str) else queued

    def _completion(self, reply: Reply, request: Request) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        prompt_tokens = max(1, request.size // 4)
        completion_tokens = max(
            1, len(reply.content or "") // 4 + sum(len(c["function"]["arguments"]) // 4 for c in reply.tool_calls)
        )
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        usage.update(reply.usage or {})
        return {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (request.json or {}).get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"),
                }
            ],
            "usage": usage,
        }

    def _record(self, http: web.Request, body: Any, size: int = 0) -> Request:
        req = Request(
            http.method, http.path_qs, {k.lower(): v for k, v in http.headers.items()}, body, time.time(), size
        )
        with self._lock:
            self.requests.append(req)
        return req

    async def _dispatch(self, http: web.Request) -> web.Response:
        arrived = time.perf_counter()  # latency counts from here
        path = http.path.rstrip("/")
        if http.method == "GET":
            self._record(http, None)
            if path.endswith("/models"):
                return _response(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "chainmark-tests"}],
                    },
                )
            return _response(404, {"error": {"message": f"no route {http.path_qs}"}})
        if http.method != "POST":
            return _response(501, {"error": {"message": f"unsupported method {http.method}"}})
        payload = await http.read()
        try:
            body = json.loads(payload) if payload else None
        except json.JSONDecodeError:
            body = {"_unparsable": payload.decode(errors="replace")}
        req = self._record(http, body, len(payload))
        if not path.endswith("/chat/completions"):
            return _response(404, {"error": {"message": f"no route {http.path_qs}"}})
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            try:
                reply = self._next_reply(req)
            except Exception as exc:  # a broken handler must not hang the client
                reply = error(400, f"scripted handler raised {exc!r}")
            body_out = reply.body if reply.body is not None else self._completion(reply, req)
            response = _response(reply.status, body_out, reply.headers)
            wait = self.latency + reply.delay - (time.perf_counter() - arrived)
            if wait > 0:
                await asyncio.sleep(wait)
            return response
        finally:
            with self._lock:
                self._in_flight -= 1


def _response(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON body (a str is sent verbatim, so tests can send malformed JSON)."""
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    return web.Response(status=status, body=data, headers={"content-type": "application/json", **(headers or {})})


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A started server with an empty script; import this name into a conftest to use it."""
    with ScriptedOpenAI() as server:
        yield server
