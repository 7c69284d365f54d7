"""Per-task budgets. When rounds or tool calls run out the model is asked for a final answer (as the
reference harnesses do); when tokens or seconds run out the trajectory stops where it is."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any
from evaluation import vocab

# Defaults follow the seed harnesses: Agentic-MME --max_rounds/--max_tool_calls 15, GTA max_turn 10.
MODE_DEFAULTS: dict[str, dict[str, int | float | None]] = {
    "atomic": {"max_rounds": 15, "max_tool_calls": 15},
    "code": {"max_rounds": 15, "max_tool_calls": 15},
    "react": {"max_rounds": 10, "max_tool_calls": 10},
    "plan": {"max_rounds": 1, "max_tool_calls": 0},
    "step": {"max_rounds": 64, "max_tool_calls": 0},
}


MAX_COUNT = vocab.MAX_COUNT
MAX_SECONDS = vocab.MAX_SECONDS


@dataclass
class Budgets:
    max_rounds: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_seconds: float | None = 600.0

    def for_mode(self, mode: str) -> "Budgets":
        """Fill unset limits with the mode's reference defaults."""
        d = MODE_DEFAULTS.get(mode, {})
        return Budgets(
            self.max_rounds if self.max_rounds is not None else d.get("max_rounds"),  # type: ignore[arg-type]
            self.max_tool_calls if self.max_tool_calls is not None else d.get("max_tool_calls"),  # type: ignore[arg-type]
            self.max_tokens,
            self.max_seconds,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def problems(self) -> list[str]:
        """What is wrong with these limits: each must be unset or a finite number above zero (tool
        calls may be 0, meaning none); ``nan``, ``inf`` or ``-1`` would silently mean "no limit" or
        "stop at once"."""
        out = []
        for name, least in (("max_rounds", 1), ("max_tool_calls", 0), ("max_tokens", 1)):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < least or value > MAX_COUNT
            ):
                out.append(f"{name} must be a whole number from {least} to {MAX_COUNT} (got {value!r})")
        seconds = self.max_seconds
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not math.isfinite(seconds)
            or not 0 < seconds <= MAX_SECONDS
        ):
            out.append(
                f"max_seconds must be a finite number of seconds above 0 and at most {MAX_SECONDS:g} (got {seconds!r})"
            )
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Budgets":
        data = data or {}
        return cls(**{k: data.get(k) for k in ("max_rounds", "max_tool_calls", "max_tokens", "max_seconds")})


class BudgetExhausted(Exception):
    """Tokens or seconds are used up: the trajectory ends without a final-answer request."""

    def __init__(self, which: str):
        super().__init__(f"budget exhausted: {which}")
        self.which = which


@dataclass
class Usage:
    rounds: int = 0
    api_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    replayed_calls: int = 0
    sent_bytes: int = 0  # request bodies posted to the model endpoint (retries included)
    sent_image_bytes: int = 0  # of which image data URLs
    extra: dict[str, Any] = field(default_factory=dict)  # mode-specific counts (code ops, effective calls)
    started: float = field(default_factory=time.monotonic)

    def add_usage(self, usage: dict[str, int]) -> None:
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.total_tokens += int(usage.get("total_tokens") or 0)

    def to_dict(self, exhausted: str | None = None) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in _USAGE_COUNTS}  # (asdict deep-copies every field: slow per task)
        out.update(self.extra)
        out["latency_s"] = round(self.latency_s, 4)
        out["wall_s"] = round(time.monotonic() - self.started, 4)
        if exhausted:
            out["budget_exhausted"] = exhausted
        return out


_USAGE_COUNTS = tuple(f.name for f in fields(Usage) if f.name not in ("started", "extra"))


def rounds_left(b: Budgets, u: Usage) -> bool:
    return b.max_rounds is None or u.rounds < b.max_rounds


def tool_calls_left(b: Budgets, u: Usage) -> bool:
    return b.max_tool_calls is None or u.tool_calls < b.max_tool_calls


def check_hard_limits(b: Budgets, u: Usage) -> None:
    if b.max_tokens is not None and u.total_tokens >= b.max_tokens:
        raise BudgetExhausted("tokens")
    if b.max_seconds is not None and time.monotonic() - u.started >= b.max_seconds:
        raise BudgetExhausted("seconds")
