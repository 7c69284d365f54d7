"""A URL as it may be shown or stored: the password in its user-info part masked.

A base URL may carry credentials (``https://user:secret@host/v1``); the model client needs them, but
listings, messages, logs and a run's recorded configuration get this form."""

from __future__ import annotations

import re

MASK = "[redacted]"
# scheme://user:password@ — the password runs to the last "@" before the host (it may hold ":" or "@")
_USERINFO_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*:)([^/\s]*)(@)")


def without_password(text: str) -> str:
    """``text`` with the password of every URL in it masked (the user name is kept: it is not secret)."""
    return _USERINFO_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)
