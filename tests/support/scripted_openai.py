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

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MODEL_ID = "scripted-model"


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


def text(content: str, *, reasoning: str | None = None, delay: float = 0.0,
         usage: dict[str, int] | None = None, finish_reason: str = "stop") -> Reply:
    return Reply(content=content, reasoning=reasoning, delay=delay, usage=usage, finish_reason=finish_reason)


def tool_calls(*calls: tuple[str, Any], content: str | None = None, delay: float = 0.0,
               usage: dict[str, int] | None = None) -> Reply:
    """Native tool calls; each ``(name, args)`` with args a dict (JSON-encoded) or a raw string."""
    out = []
    for i, (name, args) in enumerate(calls):
        arguments = args if isinstance(args, str) else json.dumps(args)
        out.append({"id": f"call_{i}_{name}", "type": "function",
                    "function": {"name": name, "arguments": arguments}})
    return Reply(content=content, tool_calls=out, delay=delay, usage=usage, finish_reason="tool_calls")


def error(status: int, message: str = "scripted error", *, retry_after: float | None = None,
          delay: float = 0.0) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status=status, delay=delay, headers=headers,
                 body={"error": {"message": message, "type": "scripted", "code": status}})


def raw(status: int, body: Any, *, delay: float = 0.0) -> Reply:
    """Any body (dict → JSON, str → sent verbatim), e.g. a malformed completion."""
    return Reply(status=status, body=body, delay=delay)


Handler = Callable[[Request], "Reply | str | None"]


class ScriptedOpenAI:
    """The server. Start with ``start()`` or as a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(self, handler: Handler | None = None, *, latency: float = 0.0, model: str = MODEL_ID):
        self.handler = handler
        self.latency = latency
        self.model = model
        self.requests: list[Request] = []
        self._queue: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._server: ThreadingHTTPServer | None = None
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
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "ScriptedOpenAI":
        owner = self

        class _Handler(_RequestHandler):
            server_owner = owner

        self._server = _QuietServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

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
        completion_tokens = max(1, len(reply.content or "") // 4
                                + sum(len(c["function"]["arguments"]) // 4 for c in reply.tool_calls))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        usage.update(reply.usage or {})
        return {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (request.json or {}).get("model", self.model),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")}],
            "usage": usage,
        }


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (killed mid-request, timed out) is expected here, not a failure."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real server
    server_owner: ScriptedOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    def _record(self, body: Any, size: int = 0) -> Request:
        owner = self.server_owner
        req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time(),
                      size)
        with owner._lock:
            owner.requests.append(req)
        return req

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            owner = self.server_owner
            self._send(200, {"object": "list", "data": [{"id": owner.model, "object": "model",
                                                         "created": 0, "owned_by": "chainmark-tests"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        payload = self.rfile.read(length) if length else b""
        try:
            body = json.loads(payload) if payload else None
        except json.JSONDecodeError:
            body = {"_unparsable": payload.decode(errors="replace")}
        req = self._record(body, len(payload))
        owner = self.server_owner
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        with owner._lock:
            owner._in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner._in_flight)
        try:
            try:
                reply = owner._next_reply(req)
            except Exception as exc:  # a broken handler must not hang the client
                reply = error(400, f"scripted handler raised {exc!r}")
            wait = owner.latency + reply.delay
            if wait > 0:
                time.sleep(wait)
            if reply.body is not None:
                self._send(reply.status, reply.body, reply.headers)
            else:
                self._send(reply.status, owner._completion(reply, req), reply.headers)
        finally:
            with owner._lock:
                owner._in_flight -= 1


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A started server with an empty script; import this name into a conftest to use it."""
    with ScriptedOpenAI() as server:
        yield server
