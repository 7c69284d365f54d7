"""What a readable transcript needs beyond a step's one-line summary: its code, its timing, its raw events.

Code shows once, as code: a code-mode run's ``code`` comes out of the ``<code>`` block of the model text
that led to it, and a Solver/Plot call's ``command`` out of its argument JSON. Timing comes from the
events' stored timestamps (a tool's run from the call to its result, a model call from sending to the
reply) and the token usage the model reply recorded. Raw events are the stored payloads as they are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store import events as ev
from store.models import Event

CODE_TOOLS = {"solver", "plot"}  # GTA tools whose ``command`` argument is Python code
CODE_ARGS = ("command", "code")
_CODE_BLOCK = re.compile(r"<code>.*?(?:</code>|\Z)", re.DOTALL | re.IGNORECASE)
_ACTION = re.compile(r"^\s*Action\s*:", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class RawEvent:
    """One stored event as it is (for the raw view): nothing summarised, nothing dropped."""

    id: int | None
    ordinal: int
    kind: str
    failed: bool
    started_at: str
    finished_at: str
    payload: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ordinal": self.ordinal,
            "kind": self.kind,
            "failed": self.failed,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "payload": self.payload,
        }


def raw_event(e: Event) -> RawEvent:
    return RawEvent(
        e.id, e.ordinal, e.kind, bool(e.failed), _stamp(e.started_at), _stamp(e.finished_at), dict(e.payload or {})
    )


def _stamp(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def split_code(tool: str, arguments: Any) -> tuple[Any, str]:
    """``(other arguments, code)``: a code tool's code argument taken out of its arguments (so it is
    not shown twice); anything else unchanged with no code. A multi-line ``code`` argument of any tool
    counts as code too."""
    if not isinstance(arguments, dict):
        return arguments, ""
    for key in CODE_ARGS:
        value = arguments.get(key)
        if isinstance(value, str) and (_norm(tool) in CODE_TOOLS or (key == "code" and "\n" in value)):
            return {k: v for k, v in arguments.items() if k != key}, value
    return arguments, ""


def without_code(thought: str, code: str) -> str:
    """Model text with the step's code left out, since the code is shown as code: a code-mode
    ``<code>`` block, or (ReAct text) everything from the ``Action:`` line that carries the code in its
    JSON input; code quoted anywhere else is replaced by a pointer."""
    if not code or not thought:
        return thought
    thought = _CODE_BLOCK.sub("", thought)
    for form in (code, json.dumps(code, ensure_ascii=False)[1:-1], json.dumps(code)[1:-1]):
        at = thought.find(form) if form.strip() else -1
        if at >= 0:
            action = max((m.start() for m in _ACTION.finditer(thought, 0, at)), default=-1)
            thought = thought[:action] if action >= 0 else thought[:at] + "(the code below)" + thought[at + len(form) :]
            break
    return thought.strip()


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    try:
        return max(0.0, (end - start).total_seconds())
    except TypeError:  # one stamp with a time zone, one without (an import): no duration rather than a wrong one
        return None


def span_seconds(events: list[Event]) -> float | None:
    """How long a step's own events took: the first start to the last finish (``None`` when no event
    recorded a finish). A code run's measured ``duration_s`` wins over its timestamps."""
    if not events:
        return None
    if len(events) == 1 and events[0].kind == ev.CODE_EXEC:
        measured = (events[0].payload or {}).get("duration_s")
        if isinstance(measured, (int, float)):
            return float(measured)
    ends = [e.finished_at for e in events if e.finished_at is not None]
    if not ends:
        return None
    return _seconds(min(e.started_at for e in events), max(ends))


@dataclass(frozen=True)
class ModelCost:
    """The model calls that led to a step: how long they took and what they used."""

    calls: int = 0
    seconds: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.total_tokens or self.prompt_tokens + self.completion_tokens


def model_cost(messages: list[Event]) -> ModelCost:
    """Latency and tokens of the model replies (``model_message`` events) before a step."""
    if not messages:
        return ModelCost()
    seconds: float | None = None
    prompt = completion = total = 0
    for m in messages:
        s = _seconds(m.started_at, m.finished_at)
        if s is not None:
            seconds = (seconds or 0.0) + s
        usage = (m.payload or {}).get("usage") or {}
        if isinstance(usage, dict):
            prompt += _int(usage.get("prompt_tokens"))
            completion += _int(usage.get("completion_tokens"))
            total += _int(usage.get("total_tokens"))
    return ModelCost(len(messages), seconds, prompt, completion, total)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def pretty_json(value: Any) -> str:
    """Indented JSON of stored data (keys in stored order, any odd value as its string)."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)
