"""A chat completion as every caller sees it (``ModelReply``), the errors of a call, and the parsing
of a completion and of an HTTP error, shared by the harness's async client and the blocking one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from evaluation.modelcall.failures import StatusFailure, TransportFailure
from evaluation.modelcall.redact import redact
from evaluation.modelcall.retry import RETRYABLE_STATUS, RetryNote, RetryPolicy
from store import safe_json


class ModelCallError(RuntimeError):
    """The endpoint did not give a usable answer (after retries, or a non-retryable error)."""

    expected = True  # the CLI prints the message as it is: it names the endpoint and what went wrong

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1, kind: str = "http"):
        super().__init__(redact(message))
        self.status, self.attempts, self.kind = status, attempts, kind


class ReplayMiss(ModelCallError):
    """Replay mode and no cached response for this exact request."""


@dataclass
class ModelReply:
    """A normalised chat completion; ``tool_calls`` items are ``{"id", "name", "arguments"}`` (raw str)."""

    content: str | None
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    latency: float = 0.0
    replayed: bool = False
    cache_key: str = ""
    sent_bytes: int = 0  # request bodies posted for this reply, every attempt counted (0 when replayed)
    sends: int = 0  # how many times the body was posted (1 + retries)

    def to_cache(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_cache(cls, data: dict[str, Any], key: str) -> "ModelReply":
        return cls(
            data.get("content"),
            data.get("reasoning"),
            list(data.get("tool_calls") or []),
            dict(data.get("usage") or {}),
            data.get("finish_reason"),
            0.0,
            True,
            key,
        )


def normalise(completion: Any, key: str) -> ModelReply:
    """A chat.completion JSON object → ModelReply; anything off-shape is a clear ``malformed`` error."""
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ModelCallError("the endpoint answered without any choice (malformed completion)", kind="malformed")
    choice = choices[0]
    msg = choice.get("message")
    if not isinstance(msg, dict):
        raise ModelCallError(
            "the endpoint answered a choice without a message (malformed completion)", kind="malformed"
        )
    reasoning = msg.get("reasoning_content") or msg.get("reasoning")
    calls = []
    for i, tc in enumerate(msg.get("tool_calls") or []):
        fn = (tc or {}).get("function") or {}
        arguments = fn.get("arguments", "")
        calls.append(
            {
                "id": (tc or {}).get("id") or f"call_{i}",
                "name": str(fn.get("name") or ""),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            }
        )
    usage = {}
    u = completion.get("usage")
    if isinstance(u, dict):
        usage = {k: int(u.get(k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    content = msg.get("content")
    if isinstance(content, list):  # some servers send content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ModelReply(
        content if isinstance(content, str) or content is None else str(content),
        reasoning if isinstance(reasoning, str) else None,
        calls,
        usage,
        choice.get("finish_reason"),
        cache_key=key,
    )


COMPLETION_DEPTH = safe_json.MAX_DEPTH + 20
"""A completion wraps its message, tool calls and arguments a few levels deep."""


def completion_of(raw: bytes, endpoint_name: str) -> Any:
    """The JSON of a completion response's body; a body that is not JSON is a ``malformed`` error."""
    try:
        return safe_json.loads(raw, max_depth=COMPLETION_DEPTH)
    except safe_json.TooDeep as exc:
        raise ModelCallError(f"the reply of {endpoint_name} is JSON {exc.msg}", kind="malformed") from exc
    except ValueError as exc:
        text = raw[:1024].decode("utf-8", "replace")
        raise ModelCallError(f"the reply of {endpoint_name} is not JSON: {text[:200]!r}", kind="malformed") from exc


def retry_or_raise(exc: Exception, policy: RetryPolicy, attempt: int, name: str, base_url: str) -> RetryNote:
    """After attempt ``attempt`` failed with ``exc``: the retry to make (its note carries the delay), or
    the ``ModelCallError`` that ends the call (not worth retrying, or the policy's attempts are spent)."""
    if isinstance(exc, StatusFailure):
        status, message = exc.status, exc.message()
        if status not in RETRYABLE_STATUS or attempt >= policy.attempts:
            raise ModelCallError(f"HTTP {status} from {name}: {message}", status=status, attempts=attempt) from exc
        return RetryNote(attempt, status, message, policy.delay(attempt, exc.retry_after))
    assert isinstance(exc, TransportFailure)
    kind, reason = exc.reason()
    if attempt >= policy.attempts:
        raise ModelCallError(
            f"{kind} talking to {name} ({base_url}) after {attempt} attempts{reason}", attempts=attempt, kind=kind
        ) from exc
    return RetryNote(attempt, None, kind, policy.delay(attempt))


# What a call may fail with and still be worth another attempt (``retry_or_raise`` decides).
RETRYABLE_ERRORS = (StatusFailure, TransportFailure)
