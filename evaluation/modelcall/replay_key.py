"""The one replay-cache key: sha256 of the canonical JSON of ``{"kind": kind, "request": request}``.

The request says what was asked, never where or with which key (no base URL, no API key), so a call
recorded against one server replays against any other serving the same model. Chat calls use the
request body as sent, images included as their data URLs; tools describe images by their sha256.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

_CHAT_PREFIX = b'{"kind":"chat","request":'


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def replay_key(kind: str, request: Any) -> str:
    return hashlib.sha256(canonical({"kind": kind, "request": request}).encode("utf-8")).hexdigest()


def chat_key_of_payload(payload: bytes) -> str:
    """``replay_key("chat", body)`` from ``canonical(body)`` already encoded (the harness sends those
    bytes as the request body and keys them without encoding the body a second time)."""
    return hashlib.sha256(_CHAT_PREFIX + payload + b"}").hexdigest()
