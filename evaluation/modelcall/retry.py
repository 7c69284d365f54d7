"""The one retry policy: which failures are worth another attempt, and how long to wait before it."""

from __future__ import annotations

import random
from dataclasses import dataclass

from evaluation.modelcall.redact import redact

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass
class RetryPolicy:
    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 20.0
    timeout: float = 180.0

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds before attempt ``attempt + 1``: the server's ``Retry-After`` (seconds) when it sent
        one, capped at ``max_delay``; else exponential backoff with jitter."""
        if retry_after:
            try:
                return min(self.max_delay, max(0.0, float(retry_after)))
            except ValueError:
                pass
        base = self.base_delay * (2 ** (attempt - 1))
        return min(self.max_delay, base + random.uniform(0, self.base_delay))


@dataclass
class RetryNote:
    """One retry, as the caller records it (the harness: a ``retry`` event of the trajectory)."""

    attempt: int
    status: int | None
    message: str
    delay: float

    def __post_init__(self) -> None:
        self.message = redact(self.message)
