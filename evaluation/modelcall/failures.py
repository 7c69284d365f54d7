"""How a model call fails before it has a completion, in the categories the harness records.

Both clients post with an HTTP library directly (no ``openai`` package: importing it cost a run half
its start-up), and report a failed request as one of two exceptions, which ``reply.retry_or_raise``
turns into a retry or a ``ModelCallError``:

- ``StatusFailure``: the endpoint answered 4xx/5xx; the message is the body's ``error.message``,
  else ``Error code: N`` (what the openai client said);
- ``TransportFailure``: no HTTP answer. ``kind`` is ``"timeout"`` or ``"connection"`` as the openai
  client classed the same failure on the same transport, so stored trajectories keep their meaning
  and a run still stops early only when nobody is listening (``runner._unreachable``): a refused
  connection or a failed name lookup (an ``OSError`` with an errno in the cause chain) is
  ``connection``, with the OS's reason; a timeout, or a connection the server dropped, is
  ``timeout``; a body cut short is ``connection``.
"""

from __future__ import annotations

import os

from store import safe_json


class StatusFailure(Exception):
    """The endpoint answered with an HTTP error status."""

    def __init__(self, status: int, body: bytes, retry_after: str | None = None):
        super().__init__(f"HTTP {status}")
        self.status, self.body, self.retry_after = status, body, retry_after

    def message(self) -> str:
        """The body's ``error.message`` (or top-level ``message``), else ``Error code: N``."""
        try:
            parsed = safe_json.loads(self.body.decode("utf-8", "replace").strip())
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            inner = parsed.get("error", parsed)
            if isinstance(inner, dict) and inner.get("message"):
                return str(inner["message"])[:500]
        return f"Error code: {self.status}"


class TransportFailure(Exception):
    """The request got no HTTP answer; raised ``from`` the HTTP library's exception."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(detail or kind)
        self.kind, self.detail = kind, detail

    def reason(self) -> tuple[str, str]:
        """``(kind, ": why")``: an OS error in the cause chain makes it a ``connection`` failure."""
        cause: BaseException | None = self.__cause__
        while cause is not None:
            if isinstance(cause, OSError) and not isinstance(cause, TimeoutError) and cause.errno:
                why = os.strerror(cause.errno) if cause.errno > 0 else cause.strerror  # < 0: a name lookup
                return "connection", f": {why} ({cause})"
            cause = cause.__cause__ or cause.__context__
        return self.kind, (f": {self.detail}" if self.detail else "")
