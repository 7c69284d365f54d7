"""Secrets never leave through an error message: every text about a model call passes ``redact``.

A key can reach a message in two ways: the server echoes it (a 401 body quoting the bad key), or an
exception carries a header. ``redact`` replaces the value of every environment variable an endpoint
reads its key from (registered with ``known_secret_env``), bearer tokens, ``sk-``-style keys and the password of a URL.
"""

from __future__ import annotations

import os
import re
import threading

from store.urls import without_password

MASK = "[redacted]"
_TOKEN = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}|\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}")
_ENV_NAMES: set[str] = set()
_LOCK = threading.Lock()


def known_secret_env(name: str | None) -> None:
    """Remember that ``$name`` holds a key: its value is masked wherever it appears from now on."""
    if name:
        with _LOCK:
            _ENV_NAMES.add(name)


def redact(text: str) -> str:
    with _LOCK:
        names = list(_ENV_NAMES)
    for name in names:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, MASK)
    return without_password(_TOKEN.sub(lambda m: (m.group(1) or "") + MASK, text))
