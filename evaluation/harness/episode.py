"""One trajectory in progress: the conversation, the budget, the tool context and the event log.

Modes (``evaluation/harness/modes``) drive an Episode: they append messages, call ``chat``, run
tools through ``run_tool`` and end with ``finish``. Everything recordable is recorded here, so each
mode only states its protocol.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from evaluation.harness.budgets import BudgetExhausted, Budgets, Usage, check_hard_limits
from evaluation.harness.client import (
    ModelClient,
    ModelReply,
    RetryNote,
    cacheable_request,
    data_url_digest,
    tools_digest,
)
from evaluation.harness.live import report as live_report
from evaluation.harness.recorder import CacheEntry, PendingEvent, Recorder
from evaluation.harness.taskdata import TaskInput
from store import events as ev
from store import safe_json
from store.blobs import BlobStore, guess_mime, put_asset_id
from store.clock import utcnow
from store.dialects import name_of

DEFAULT_MAX_REPLY_CHARS = 200_000


class DbRunner:
    """All database work of a run goes through one thread, so the event loop never blocks on SQLite
    and the run's own writes never contend with each other. Each job gets a plain connection in a
    transaction of its own (SQLAlchemy Core: a run never builds the SQLModel classes). ``actor`` is who
    runs it; no write of a run goes to an audited table, so no job needs it today."""

    def __init__(self, engine: Engine, executor: Executor, actor: str | None = None):
        self.engine, self.executor, self.actor = engine, executor, actor

    @property
    def dialect(self) -> str:
        return name_of(self.engine)

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self.submit(fn, *args, **kwargs)

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> "asyncio.Future[Any]":
        """``fn(connection, *args)`` in its own transaction, queued now (``call`` queues it when awaited)."""

        def work() -> Any:
            with self.engine.begin() as conn:
                return fn(conn, *args, **kwargs)

        return asyncio.get_running_loop().run_in_executor(self.executor, work)


@dataclass
class RunContext:
    """What every trajectory of a run shares."""

    run_id: int
    mode: str
    engine: Engine
    blobs: BlobStore
    db: DbRunner
    client: ModelClient
    budgets: Budgets
    tool_pool: Executor  # CPU-bound tools: a few threads
    service_pool: Executor | None = None  # service tools wait on the network: one thread per worker
    tool_set_name: str | None = None
    tool_set: Any = None  # evaluation.tools.ToolSet
    tool_settings: Any = None  # evaluation.tools.ToolSettings
    settings: dict[str, Any] = field(default_factory=dict)  # Benchmark.settings (prompt overrides, …)
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    sandbox: Any = None  # evaluation.harness.sandbox.SandboxLimits
    unsafe_in_process_sandbox: bool = False  # the user allowed model code to run without an OS-level sandbox
    listener: Callable[[int, PendingEvent], None] | None = None
    schemas: dict[tuple[str, ...], list[dict[str, Any]]] = field(default_factory=dict)  # see Episode.tool_schemas
    tool_digests: dict[int, tuple[list[Any], str]] = field(default_factory=dict)  # see tools_name

    def tools_name(self, tools: list[Any]) -> str:
        """``tools_digest`` of a tool list, worked out once per list for the whole run: the lists a
        run sends are ``Episode.tool_schemas``' shared, read-only ones (encoding Agentic-MME's 9 kB of
        schemas for every trajectory was a tenth of a harness process's CPU at -j 256)."""
        known = self.tool_digests.get(id(tools))
        if known is None or known[0] is not tools:
            if len(self.tool_digests) >= 16:
                self.tool_digests.clear()
            known = self.tool_digests[id(tools)] = (tools, tools_digest(tools))
        return known[1]


@dataclass
class ToolOutcome:
    ok: bool
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    images: list[bytes] = field(default_factory=list)
    asset_ids: list[int] = field(default_factory=list)
    image_indices: list[int] = field(default_factory=list)
    image_names: list[str] = field(default_factory=list)


def data_url(data: bytes, mime: str | None = None) -> str:
    return f"data:{mime or guess_mime(data)};base64,{base64.b64encode(data).decode()}"


def _store_images(session: Any, blobs: BlobStore, images: list[bytes]) -> list[int]:
    return [put_asset_id(session, blobs, data) for data in images]


class Episode:
    def __init__(self, rc: RunContext, task: TaskInput, trajectory_id: int):
        from evaluation.tools import ToolContext

        self.rc, self.task, self.trajectory_id = rc, task, trajectory_id
        listener = (lambda e: rc.listener(trajectory_id, e)) if rc.listener else None
        self.recorder = Recorder(listener)
        self.budgets = rc.budgets
        self.usage = Usage()
        self.cache: list[CacheEntry] = []
        self.messages: list[dict[str, Any]] = []
        self._recorded = 0
        self._own: set[int] = set()
        self._image_refs: dict[str, dict[str, Any]] = {}
        self._digests: dict[str, str] = {}  # data URL → digest, for the cache rows of every later round
        self._tool_lists: dict[int, tuple[list[Any], str]] = {}  # tool list (by identity) → its cache name
        self.tool_ctx = ToolContext(
            images=[i.data for i in task.images],
            files={i.name: i.data for i in task.images},
            settings=rc.tool_settings,
            allow_paths=False,
        )
        self.image_assets: list[int] = [i.asset_id for i in task.images]  # image index → asset id
        self.final_answer: str | None = None
        self.exhausted: str | None = None
        self.failed_reason: str | None = None

    # ------------------------------------------------------------------ messages

    def image_part(
        self, data: bytes, asset_id: int, index: int | None = None, mime: str | None = None
    ) -> dict[str, Any]:
        """An ``image_url`` part; the event log records it as ``{"type": "image", "asset_id", ...}``."""
        url = data_url(data, mime)
        ref: dict[str, Any] = {"type": "image", "asset_id": asset_id}
        if index is not None:
            ref["image_index"] = index
        self._image_refs[url] = ref
        return {"type": "image_url", "image_url": {"url": url}}

    def add(self, role: str, content: Any, **extra: Any) -> dict[str, Any]:
        msg = {"role": role, "content": content, **extra}
        self.messages.append(msg)
        return msg

    def add_assistant(self, reply: ModelReply) -> dict[str, Any]:
        """The model's own reply, appended to the history (already logged as a model_message)."""
        msg: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
        if reply.tool_calls:
            msg["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in reply.tool_calls
            ]
        self.messages.append(msg)
        self._own.add(id(msg))
        return msg

    def _loggable(self, content: Any) -> Any:
        if not isinstance(content, list):
            return content
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = part["image_url"].get("url", "")
                out.append(self._image_refs.get(url) or {"type": "image", "url": url[:200]})
            else:
                out.append(part)
        return out

    def _record_outgoing(self) -> None:
        for msg in self.messages[self._recorded :]:
            if id(msg) in self._own or msg["role"] == "tool":
                continue
            content = self._loggable(msg.get("content"))
            assets = (
                [(p["asset_id"], "input") for p in content if isinstance(p, dict) and p.get("asset_id")]
                if isinstance(content, list)
                else []
            )
            payload = {"role": msg["role"], "content": content}
            if msg.get("replayed_gold"):
                payload["replayed_gold"] = True
            self.recorder.add(ev.USER_MESSAGE, payload, assets=assets)
        self._recorded = len(self.messages)

    # ------------------------------------------------------------------ model calls

    def _digest(self, url: str) -> str:
        digest = self._digests.get(url)
        if digest is None:
            digest = self._digests[url] = data_url_digest(url)
        return digest

    def _tools_name(self, tools: list[Any]) -> str:
        """The cache name of a tool list; the list itself goes to the cache once per trajectory."""
        known = self._tool_lists.get(id(tools))
        if known is None or known[0] is not tools:
            known = self._tool_lists[id(tools)] = (tools, self.rc.tools_name(tools))
            self.cache.append(CacheEntry(known[1], "tools", None, {"tools": tools}))
        return known[1]

    def _remaining_seconds(self) -> float | None:
        if self.budgets.max_seconds is None:
            return None
        return max(0.0, self.budgets.max_seconds - (time.monotonic() - self.usage.started))

    async def chat(
        self, tools: list[dict[str, Any]] | None = None, tool_choice: Any = None, **overrides: Any
    ) -> ModelReply:
        """Send the conversation; log what was sent and what came back; count the round."""
        check_hard_limits(self.budgets, self.usage)
        self._record_outgoing()
        wire = [{k: v for k, v in m.items() if k != "replayed_gold"} for m in self.messages]
        body = self.rc.client.build_body(wire, tools, tool_choice, **overrides)
        started = utcnow()

        def on_retry(note: RetryNote) -> None:
            self.usage.retries += 1
            self.recorder.add(
                ev.ERROR,
                {
                    "type": "retry",
                    "message": note.message,
                    "status": note.status,
                    "attempt": note.attempt,
                    "delay_s": round(note.delay, 3),
                },
            )

        remaining = self._remaining_seconds()
        try:
            async with asyncio.timeout(remaining):
                reply = await self.rc.client.chat(body, on_retry)
        except TimeoutError:
            raise BudgetExhausted("seconds") from None
        self.usage.rounds += 1
        self.usage.api_calls += 1
        self.usage.latency_s += reply.latency
        self.usage.add_usage(reply.usage)
        self.usage.sent_bytes += reply.sent_bytes
        self.usage.sent_image_bytes += reply.sends * image_chars(wire)
        if reply.replayed:
            self.usage.replayed_calls += 1
        else:
            self.cache.append(
                CacheEntry(
                    reply.cache_key, "model", cacheable_request(body, self._digest, self._tools_name), reply.to_cache()
                )
            )
        failed = False
        payload: dict[str, Any] = {
            "content": reply.content,
            "reasoning": reply.reasoning,
            "tool_calls": [{**c, "parsed": _parse_json_object(c["arguments"])} for c in reply.tool_calls],
            "usage": reply.usage,
            "finish_reason": reply.finish_reason,
        }
        if reply.content is not None and len(reply.content) > self.rc.max_reply_chars:
            size = len(reply.content)
            reply.content = reply.content[: self.rc.max_reply_chars]
            payload["content"], payload["truncated_from"] = reply.content, size
            failed = True
        if reply.replayed:
            payload["replayed"] = True
        self.recorder.add(ev.MODEL_MESSAGE, payload, failed=failed, started_at=started)
        if failed:
            self.recorder.error(
                "oversized_reply",
                f"the reply had {payload['truncated_from']} characters; kept the first {self.rc.max_reply_chars}",
            )
        asked = [str(c.get("name")) for c in reply.tool_calls]
        self.live(f"model call {self.usage.api_calls}" + (f" → {', '.join(asked)}" if asked else ""))
        check_hard_limits(self.budgets, self.usage)
        return reply

    def live(self, step: str) -> None:
        """Tell monitors (through the database) where this trajectory is."""
        if self.rc.db is not None:
            live_report(self.rc.db, self.trajectory_id, self.usage.to_dict(), step)

    # ------------------------------------------------------------------ tools

    def offered_tools(self) -> list[Any]:
        """The benchmark tool set's tools, narrowed to the task's ``tools_offered`` when it names some."""
        ts = self.rc.tool_set
        if ts is None:
            return []
        tools = ts.all_tools()
        wanted = [n for n in self.task.tools_offered if n in {t.name for t in tools}]
        return [t for t in tools if t.name in wanted] if wanted else tools

    def tool_schemas(self, tools: list[Any]) -> list[dict[str, Any]]:
        """The OpenAI function schemas of ``tools``: one list object per tool selection for the whole
        run, so the client encodes it once (treat it as read-only)."""
        names = tuple(t.name for t in tools)
        schemas = self.rc.schemas.get(names)
        if schemas is None:
            schemas = self.rc.schemas[names] = [t.openai() for t in tools]
        return schemas

    async def run_tool(
        self, name: str, arguments: Any, call_id: str = "", *, allowed: set[str] | None = None
    ) -> ToolOutcome:
        """Validate, execute (in the tool pool) and log one call; invalid calls are failed steps."""
        self.usage.tool_calls += 1
        allowed = allowed if allowed is not None else {t.name for t in self.offered_tools()}
        args: dict[str, Any] | None
        problem: str | None = None
        if isinstance(arguments, dict):
            args = arguments
        else:
            args = _parse_json_object(arguments)
            if args is None:
                problem = f"arguments of {name!r} are not a valid JSON object: {str(arguments)[:200]!r}"
        if name not in allowed:
            problem = f"unknown tool {name!r}; available tools: {', '.join(sorted(allowed)) or 'none'}"
        if problem is not None:
            self.recorder.add(
                ev.TOOL_CALL,
                ev.tool_call(
                    name,
                    args if args is not None else {},
                    call_id,
                    raw_arguments=arguments if not isinstance(arguments, dict) else None,
                ),
                failed=True,
            )
            self.recorder.add(
                ev.TOOL_RESULT, ev.tool_result(name, "", call_id=call_id, ok=False, error=problem), failed=True
            )
            return ToolOutcome(False, "", error=problem)
        assert args is not None
        self.live(f"tool {name}")
        self.recorder.add(ev.TOOL_CALL, ev.tool_call(name, args, call_id))
        started = utcnow()
        loop = asyncio.get_running_loop()
        before = len(self.tool_ctx.images)
        pool = (
            self.rc.service_pool if self._is_service(name) and self.rc.service_pool is not None else self.rc.tool_pool
        )
        if self.tool_ctx.http_post is None and self.rc.client.services is not None:
            self.tool_ctx.http_post = functools.partial(self.rc.client.services.post, loop)
        result = await loop.run_in_executor(pool, self._execute, name, args)
        # The tool hands back pixels, whose PNG encodes began on the encode threads as the call
        # returned (see ``_execute``); wait for the bytes (to store and to send) without blocking
        # the loop. An encode that failed raises here, as an inline encode would have.
        images = await encoded_images(result.produced) if result.produced else []
        asset_ids = list(result.asset_ids)
        if images and len(asset_ids) != len(images):
            asset_ids = await self.rc.db.call(_store_images, self.rc.blobs, images)
        indices = list(range(before, before + len(images)))
        self.image_assets.extend(asset_ids)
        extra: dict[str, Any] = {}
        if indices:
            extra["image_index"] = indices[0] if len(indices) == 1 else indices
            extra["image_names"] = list(result.image_names)
        if result.error:
            extra["error"] = result.error
        if getattr(result, "replayed", False):
            extra["replayed"] = True
        self.recorder.add(
            ev.TOOL_RESULT,
            ev.tool_result(
                name,
                result.text or "",
                call_id=call_id,
                ok=result.ok,
                data=_jsonable(result.data),
                asset_ids=asset_ids,
                **extra,
            ),
            failed=not result.ok,
            started_at=started,
            assets=[(a, "output") for a in asset_ids],
        )
        return ToolOutcome(
            result.ok,
            result.text or "",
            dict(result.data or {}),
            result.error,
            images,
            asset_ids,
            indices,
            list(result.image_names),
        )

    def _is_service(self, name: str) -> bool:
        ts = self.rc.tool_set
        tool = (ts.tools.get(name) or ts.extras.get(name)) if ts is not None else None
        return tool is not None and tool.kind == "service"

    def _execute(self, name: str, args: dict[str, Any]) -> Any:
        """Service tools get the engine, not a session: they read and write the replay cache in short
        transactions of their own, so no transaction is held across their network call. Their HTTP
        goes out on the run's loop (``service_http``) when the run posts live."""
        from evaluation.tools import execute

        if self._is_service(name):
            self.tool_ctx.engine, self.tool_ctx.blobs = self.rc.engine, self.rc.blobs
            try:
                result = execute(self.rc.tool_set_name, name, args, self.tool_ctx)
            finally:
                self.tool_ctx.engine = self.tool_ctx.blobs = None
        else:
            result = execute(self.rc.tool_set_name, name, args, self.tool_ctx)
        start_encodes(result.produced)  # the moment the pixels exist, so every image encodes at once
        return result

    async def store_images(self, images: list[bytes]) -> list[int]:
        return await self.rc.db.call(_store_images, self.rc.blobs, images) if images else []

    # ------------------------------------------------------------------ the end

    def finish(self, text: str | None, raw: str | None, extracted_by: str, *, failed: bool = False) -> None:
        self.final_answer = text
        self.recorder.add(ev.ANSWER, ev.answer(text or "", raw, extracted_by), failed=failed)


def start_encodes(produced: list[Any]) -> None:
    """Begin the background PNG encode of each produced image (stored bytes need none)."""
    if all(isinstance(image, bytes) for image in produced):
        return  # nothing produced: a service tool's call never loads the image module (OpenCV) here
    from evaluation.tools.images import Produced

    for image in produced:
        if isinstance(image, Produced):
            image.start()


async def encoded_images(produced: list[Any]) -> list[bytes]:
    """The PNG bytes of ``produced``, awaited on the encode threads' futures (the loop stays free)."""
    if all(isinstance(image, bytes) for image in produced):
        return list(produced)
    from evaluation.tools.images import Produced

    waits = [asyncio.wrap_future(i.start()) if isinstance(i, Produced) else None for i in produced]
    return [await w if w is not None else i for i, w in zip(produced, waits)]


def image_chars(messages: list[dict[str, Any]]) -> int:
    """Bytes the image data URLs of ``messages`` take in a request body (they are ASCII and need no
    JSON escaping, so their length is their size on the wire)."""
    total = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    total += len(part["image_url"].get("url", ""))
    return total


def _parse_json_object(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    try:
        value = safe_json.loads(raw) if raw.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))
