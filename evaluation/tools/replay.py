"""Record/replay of service calls through the ``ReplayCache`` table.

The key is sha256 of a canonical JSON of (kind, request). Requests name images by their sha256 and
never contain API keys or base URLs, so a call recorded against one server replays anywhere, and
a cache can be shared without leaking secrets. Order of use: a recorded answer wins; otherwise a
configured backend is called and its answer recorded; otherwise a clear error says what to set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from sqlmodel import select

from evaluation.tools.result import ToolContext, ToolError
from store.models import ReplayCache


def canonical(kind: str, request: dict[str, Any]) -> str:
    return json.dumps({"kind": kind, "request": request}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(kind: str, request: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(kind, request).encode("utf-8")).hexdigest()


def lookup(ctx: ToolContext, kind: str, request: dict[str, Any]) -> Any | None:
    if ctx.session is None:
        return None
    row = ctx.session.exec(select(ReplayCache).where(ReplayCache.key == request_key(kind, request))).first()
    return None if row is None else row.response


def record(ctx: ToolContext, kind: str, request: dict[str, Any], response: Any) -> None:
    if ctx.session is None:
        return
    key = request_key(kind, request)
    if ctx.session.exec(select(ReplayCache).where(ReplayCache.key == key)).first() is None:
        ctx.session.add(ReplayCache(key=key, kind=kind, request=request, response=response))
        ctx.session.flush()


def call(ctx: ToolContext, tool: str, kind: str, request: dict[str, Any], live: Callable[[], Any],
         missing_backend: str | None) -> tuple[Any, bool]:
    """The response for ``request`` and whether it was replayed.

    ``missing_backend`` is None when the live backend is configured, else the sentence telling the
    user what to configure; it becomes the error when there is no recorded answer either.
    """
    cached = lookup(ctx, kind, request)
    if cached is not None:
        return cached, True
    if ctx.settings.replay_only:
        raise ToolError(f"{tool}: no recorded response for this call and replay-only mode is on "
                        "(CHAINMARK_REPLAY_ONLY); record it first with the service configured")
    if missing_backend is not None:
        where = "" if ctx.session is not None else " (no database session, so no recorded calls either)"
        raise ToolError(f"{tool}: no backend configured and no recorded response{where}: {missing_backend}")
    response = live()
    record(ctx, kind, request, response)
    return response, False
