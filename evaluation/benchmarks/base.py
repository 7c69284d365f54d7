"""What a benchmark profile is: its name, the source formats it scores, its judges, and ``score``.

A profile turns plain ``Item``s into the paper's numbers. It never touches the database: the runner
(``evaluation.scoring.runner``) loads items, hands the profile an oracle for judge answers and an
embedder factory, and stores what comes back.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

from evaluation.scoring.embedding import Embedder
from evaluation.scoring.items import Item, JudgeOracle, NoJudges
from evaluation.scoring.matchers import check_mode

if TYPE_CHECKING:  # pydantic (≈ 0.08 s) loads where a result is built, not before a command's work
    from evaluation.scoring.results import ScoreResult


@dataclass
class ScoreContext:
    mode: str = "faithful"
    run_mode: str = "atomic"  # the Run's mode: atomic | code | react | plan | step
    oracle: JudgeOracle = field(default_factory=NoJudges)
    embedder_factory: Callable[[], Embedder] | None = None
    _embedder: Embedder | None = None
    corrections: set[str] = field(default_factory=set)  # fixed-mode corrections used while scoring

    def __post_init__(self) -> None:
        check_mode(self.mode)

    def correct(self, name: str) -> bool:
        """True in fixed mode, recording that correction ``name`` was used (it appears in ``corrections``).

        Profiles call it at each place where fixed mode departs from the reference: ``if ctx.correct(X):``.
        Every name must be declared in its profile module's ``CORRECTIONS`` (name -> one-line description).
        """
        if self.mode != "fixed":
            return False
        self.corrections.add(name)
        return True

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if self.embedder_factory is None:
                from evaluation.scoring.embedding import get_embedder

                self._embedder = get_embedder("minilm")
            else:
                self._embedder = self.embedder_factory()
        return self._embedder

    @property
    def embedder_name(self) -> str | None:
        return self._embedder.name if self._embedder is not None else None


class Profile(Protocol):
    name: str
    formats: tuple[str, ...]
    judges: tuple[str, ...]

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult: ...


def pct(num: float, den: float) -> float | None:
    """num/den × 100, or None when there is nothing to divide by."""
    return num / den * 100 if den else None


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def set_prf(pred: set[str], gold: set[str]) -> tuple[float, float, float]:
    """Tool-set precision, recall and F1 of the tools used against the reference's (all 1 when both are empty)."""
    if not pred and not gold:
        return 1.0, 1.0, 1.0
    inter = len(pred & gold)
    p = inter / len(pred) if pred else 0.0
    r = inter / len(gold) if gold else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def tool_calls_of(item: Item) -> list[str]:
    """Tool names the model used, in order: native calls, planned calls, GTA step predictions, traced code ops."""
    names: list[str] = []
    for e in item.events:
        kind = e["kind"]
        if kind == "tool_call":
            names.append(str((e.get("payload") or {}).get("name") or ""))
        elif kind == "plan_call":
            p = e.get("payload") or {}
            if p.get("valid", True):
                names.append(str(p.get("tool_name") or ""))
        elif kind == "step_prediction":
            for c in ((e.get("payload") or {}).get("prediction") or {}).get("tool_calls") or []:
                names.append(str((c.get("function") or {}).get("name") or ""))
        elif kind == "code_exec":
            names.extend(str(op.get("op") or "") for op in (e.get("payload") or {}).get("ops") or [])
    return [n for n in names if n]


def usage_stats(items: list[Item], calls: Callable[[Item], list[str]] = tool_calls_of) -> dict[str, Any]:
    """Tool adoption (share of items using a tool at least once, %) and the calls-per-item histogram."""
    counter = UsageCounter(calls)
    counter.add(items)
    return counter.stats()


class UsageCounter:
    """``usage_stats`` over items given a chunk at a time."""

    def __init__(self, calls: Callable[[Item], list[str]] = tool_calls_of):
        self.calls = calls
        self.adoption: Counter[str] = Counter()
        self.hist: Counter[int] = Counter()
        self.total_calls: Counter[str] = Counter()
        self.n = 0

    def add(self, items: list[Item]) -> None:
        """One ``Counter.update`` per counter for the whole chunk (its C loop), not three per item."""
        calls = self.calls
        sizes: list[int] = []
        used: list[str] = []
        adopted: list[str] = []
        for it in items:
            names = calls(it)
            sizes.append(len(names))
            used += names
            adopted += set(names)
        self.hist.update(sizes)
        self.total_calls.update(used)
        self.adoption.update(adopted)
        self.n += len(items)

    def stats(self) -> dict[str, Any]:
        adoption, hist, total_calls, n = self.adoption, self.hist, self.total_calls, self.n
        return {
            "items": n,
            "tool_adoption": {k: v / n * 100 for k, v in sorted(adoption.items(), key=lambda kv: (-kv[1], kv[0]))}
            if n
            else {},
            "tool_calls": dict(sorted(total_calls.items(), key=lambda kv: (-kv[1], kv[0]))),
            "calls_histogram": {str(k): hist[k] for k in sorted(hist)},
            "tool_call_rate": (sum(v for k, v in hist.items() if k > 0) / n * 100) if n else None,
        }


def result(
    profile: str,
    ctx: ScoreContext,
    metrics: dict[str, Any],
    *,
    by_category: dict[str, Any] | None = None,
    per_item: list[dict[str, Any]] | None = None,
    outcomes: list[tuple[int, Any]] | None = None,
    notes: list[str] | None = None,
    pending: int = 0,
    usage: dict[str, Any] | None = None,
    category_label: str = "category",
) -> ScoreResult:
    """Every profile's answer, validated: ``mode`` and ``embedder`` are always present."""
    from evaluation.scoring.results import ScoreResult, Usage

    return ScoreResult.with_rows(
        per_item or [],
        outcomes or [],
        profile=profile,
        mode=ctx.mode,  # check_mode has refused anything else
        run_mode=ctx.run_mode,
        embedder=ctx.embedder_name,
        metrics=metrics,
        by_category=by_category or {},
        category_label=category_label,
        pending_judgements=pending,
        usage=Usage.model_validate(usage or {}),
        notes=notes or [],
        corrections=sorted(ctx.corrections),
    )
