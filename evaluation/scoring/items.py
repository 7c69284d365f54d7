"""Plain data the scorers work on: one ``Item`` per trajectory, plus the judge question/answer shapes.

Why plain data: profiles must score 10,000 trajectories in well under two seconds and be testable
from hand-built dicts, so they never touch the ORM. ``loader.load_run`` fills these from the store.
Judges are reached through a ``JudgeOracle``: a profile *asks* (``JudgeRequest``) and gets a stored
answer or ``None`` (not judged yet); the oracle remembers what was missing so ``chainmark judge`` can
go and ask a model exactly those questions.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Item:
    """A trajectory with everything needed to score it, as dicts (keys as in ``store.models``)."""

    task: dict[str, Any]
    trajectory: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    ordering: list[dict[str, Any]] = field(default_factory=list)
    reference_steps: list[dict[str, Any]] = field(default_factory=list)
    task_assets: list[dict[str, Any]] = field(default_factory=list)  # {asset_id, role, ordinal, original_path, sha256}
    asset_sha: dict[int, str] = field(default_factory=dict)  # every asset id the item mentions → sha256
    native_assets: dict[str, int] = field(default_factory=dict)  # file of the native record → its asset id

    @property
    def source(self) -> dict[str, Any]:
        rec = self.task.get("source_record")
        return rec if isinstance(rec, dict) else {}

    @property
    def native(self) -> Any:
        return self.trajectory.get("native")

    def events_of(self, *kinds: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] in kinds]

    def final_answer(self) -> str:
        """The ANSWER event's text if there is one, else the trajectory's final answer."""
        for e in reversed(self.events):
            if e["kind"] == "answer":
                return str((e.get("payload") or {}).get("text") or "")
        return str(self.trajectory.get("final_answer") or "")

    def query_assets(self) -> list[int]:
        return [
            a["asset_id"]
            for a in sorted(self.task_assets, key=lambda a: a.get("ordinal", 0))
            if a.get("role") == "query_image"
        ]

    def produced_assets(self) -> list[int]:
        """Images the model's tools produced, in event order (tool results and sandboxed code)."""
        out: list[int] = []
        for e in self.events:
            if e["kind"] in ("tool_result", "code_exec"):
                for a in (e.get("payload") or {}).get("asset_ids") or []:
                    if a not in out:
                        out.append(int(a))
        return out


@dataclass(frozen=True)
class JudgeRequest:
    """One question for one judge about one target. ``images`` are asset ids (or file paths)."""

    judge: str  # judge spec name, e.g. "amme-visual"
    target_kind: str
    target_id: int
    target_part: str
    variables: tuple[tuple[str, Any], ...]
    images: tuple[Any, ...] = ()
    # Sampling parameters this question overrides (e.g. a retry's temperature), over the template's.
    params: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def make(
        judge: str,
        target_id: int,
        target_part: str,
        variables: dict[str, Any],
        images: list[Any] | tuple[Any, ...] = (),
        target_kind: str = "trajectory",
        params: dict[str, Any] | None = None,
    ) -> "JudgeRequest":
        return JudgeRequest(
            judge,
            target_kind,
            int(target_id),
            target_part,
            tuple(sorted((k, _freeze(v)) for k, v in variables.items())),
            tuple(images),
            tuple(sorted((params or {}).items())),
        )

    @property
    def vars(self) -> dict[str, Any]:
        return {k: _thaw(v) for k, v in self.variables}


class _Frozen(str):
    """A dict or list variable kept as JSON text, so a request stays hashable; told apart from plain
    strings by type, so a string that merely looks like JSON (a judge's report) is passed on verbatim."""


def _freeze(v: Any) -> Any:
    return _Frozen(json.dumps(v, sort_keys=True, ensure_ascii=False)) if isinstance(v, (dict, list)) else v


def _thaw(v: Any) -> Any:
    return json.loads(v) if isinstance(v, _Frozen) else v


@dataclass
class JudgeAnswer:
    """A stored verdict as the scorers see it."""

    label: str | None
    score: float | None
    parsed: Any
    raw_output: str | None
    judge_name: str = ""
    verdict_id: int | None = None


class JudgeOracle(Protocol):
    def ask(self, request: JudgeRequest) -> JudgeAnswer | None: ...


class NoJudges:
    """The oracle of a rule-only scoring pass: nothing is judged; missing questions are remembered."""

    def __init__(self) -> None:
        self.pending: list[JudgeRequest] = []

    def ask(self, request: JudgeRequest) -> JudgeAnswer | None:
        self.pending.append(request)
        return None


class DictOracle:
    """Answers from a dict ``{(judge, target_part): JudgeAnswer}``; for tests and replays of plain data."""

    def __init__(self, answers: dict[tuple[str, str], JudgeAnswer]):
        self.answers = answers
        self.pending: list[JudgeRequest] = []

    def ask(self, request: JudgeRequest) -> JudgeAnswer | None:
        got = self.answers.get((request.judge, request.target_part))
        if got is None:
            self.pending.append(request)
        return got


def stable_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
