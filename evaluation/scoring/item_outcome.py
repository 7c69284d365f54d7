"""One trajectory's own score, as ``chainmark score`` counts it, for the review screens.

A reviewer looking at one trajectory needs the run's verdict on that item (right or wrong, and the
score in [0, 1]) and, for GTA step-by-step runs, the scorer's decision on each gold step (tool name
right? arguments right?). Both come from the benchmark profile itself (``item_score`` and the
per-item rows), never from a second matcher, so the screens cannot disagree with the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, col, select

from evaluation.compare import RIGHT_AT
from evaluation.scoring.embedding import EmbedderUnavailable
from evaluation.scoring.loader import load_run
from evaluation.scoring.runner import profile_for, score_loaded
from store.models import Trajectory


@dataclass(frozen=True)
class StepMark:
    """The scorer's decision on one gold step of a step-by-step run."""

    gold_index: int
    gold: str  # "tool" | "answer" | ...
    predicted: str
    tool: bool | None = None  # tool name right (ToolAcc), for a gold tool step
    args: bool | None = None  # arguments right (ArgAcc), for a gold tool step
    answer: float | None = None  # the answer's score, for the gold answer step
    error: bool = False  # the prediction carried an error

    @property
    def ok(self) -> bool:
        """The step counted in full: right tool with right arguments, or a right answer."""
        if self.gold == "tool":
            return bool(self.tool and self.args)
        return self.answer is not None and self.answer >= RIGHT_AT

    def label(self) -> str:
        """``ToolAcc ✓ ArgAcc ✗`` / ``answer ✓`` — what the marks column shows."""

        def tick(ok: bool | None) -> str:
            return "✓" if ok else "✗"

        if self.gold == "tool":
            return f"ToolAcc {tick(self.tool)} ArgAcc {tick(self.args)}" + (" · error" if self.error else "")
        if self.answer is not None:
            return f"answer {tick(self.answer >= RIGHT_AT)}" + (
                f" ({self.answer:.2f})" if self.answer not in (0.0, 1.0) else ""
            )
        return f"{self.gold}: predicted {self.predicted}"


@dataclass(frozen=True)
class ItemOutcome:
    """What the run's own scoring says about one trajectory."""

    score: float | None  # in [0, 1]; None when the profile gives no per-item score (unanswered, unscorable)
    mode: str = "faithful"
    steps: tuple[StepMark, ...] = ()
    note: str = ""  # why there is no score (or, for a judged item, no verdict), when there is none
    judge: str = ""  # the LLM judge whose verdict is this item's score; "" when rules score it
    verdict: bool = True  # a judged item: that judge's verdict is in (else ``note`` says why not)

    @property
    def right(self) -> bool | None:
        """None while there is no decision: no score, or a judged item whose verdict is not in (its
        score is then the benchmark's default, not anyone's judgement of the answer)."""
        if self.score is None or (self.judge and not self.verdict):
            return None
        return self.score >= RIGHT_AT

    def describe(self) -> str:
        """``right (1.00)`` / ``wrong (0.00)`` / ``not scored: …`` for rule-scored items;
        ``judged 0.72 by LLM judge atp-chief (not auto-scored)`` / ``judged by LLM judge …, not
        auto-scored: no verdict yet`` for items a judge decides."""
        if self.judge:
            if self.verdict and self.score is not None:
                return f"judged {self.score:.2f} by LLM judge {self.judge} (not auto-scored)"
            counts = f" (counts {self.score:.2f}, the benchmark's default)" if self.score is not None else ""
            return f"judged by LLM judge {self.judge}, not auto-scored: {self.note or 'no verdict yet'}{counts}"
        if self.score is None:
            return f"not scored{': ' + self.note if self.note else ''}"
        return f"{'right' if self.right else 'wrong'} ({self.score:.2f})"


def step_marks(row: dict[str, Any]) -> tuple[StepMark, ...]:
    """The per-gold-step decisions a profile recorded on its per-item row (GTA step mode)."""
    out: list[StepMark] = []
    for s in row.get("steps") or []:
        answer = s.get("answer")
        out.append(
            StepMark(
                int(s.get("gold_index", len(out))),
                str(s.get("gold") or ""),
                str(s.get("predicted") or ""),
                s.get("tool"),
                s.get("args"),
                float(answer) if isinstance(answer, (int, float)) else None,
                bool(s.get("error")),
            )
        )
    return tuple(out)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def trajectory_outcome(
    session: Session, trajectory_id: int, *, mode: str = "faithful", embedder: str = "minilm"
) -> ItemOutcome:
    """Score just this trajectory with its benchmark's profile (nothing is written); never raises for
    a trajectory the profile cannot score, the note says why instead."""
    traj = session.get(Trajectory, trajectory_id)
    if traj is None:
        raise LookupError(f"no trajectory with id {trajectory_id}")
    return _run_outcomes(session, traj.run_id, [trajectory_id], mode, embedder)[trajectory_id]


def trajectory_outcomes(
    session: Session, trajectory_ids: Iterable[int], *, mode: str = "faithful", embedder: str = "minilm"
) -> dict[int, ItemOutcome]:
    """``trajectory_outcome`` for many trajectories, scoring each run once (a queue of disagreements
    touches a few runs, many items); ids with no trajectory are left out."""
    wanted = sorted(set(trajectory_ids))
    if not wanted:
        return {}
    rows = session.exec(select(Trajectory.id, Trajectory.run_id).where(col(Trajectory.id).in_(wanted))).all()
    by_run: dict[int, list[int]] = {}
    for tid, run_id in rows:
        if tid is not None:
            by_run.setdefault(run_id, []).append(tid)
    out: dict[int, ItemOutcome] = {}
    for run_id, ids in sorted(by_run.items()):
        out.update(_run_outcomes(session, run_id, ids, mode, embedder))
    return out


def _run_outcomes(session: Session, run_id: int, ids: list[int], mode: str, embedder: str) -> dict[int, ItemOutcome]:
    """The outcomes of these trajectories of one run, from one scoring pass over just them."""
    try:
        loaded = load_run(session, run_id, only=ids)
        profile = profile_for(loaded)
        scored = score_loaded(session, loaded, mode=mode, embedder=embedder)
    except EmbedderUnavailable as exc:
        return {t: ItemOutcome(None, mode, note=_first_line(exc)) for t in ids}
    except Exception as exc:  # a profile that cannot score this item must not keep the trajectory from showing
        note = f"could not score ({type(exc).__name__}: {_first_line(exc)})"
        return {t: ItemOutcome(None, mode, note=note) for t in ids}
    rows = {r.get("trajectory_id"): r for r in scored.per_item}
    item_score = getattr(profile, "item_score", None)
    judge = str(getattr(profile, "item_judge", "") or "")
    pending = getattr(profile, "item_pending", None)
    out: dict[int, ItemOutcome] = {}
    for t in ids:
        row = rows.get(t)
        if row is None:
            out[t] = ItemOutcome(None, mode, note="the profile gave no result for this trajectory")
            continue
        score = item_score(row) if item_score is not None else None
        if judge:  # the answer is judged, not auto-scored: say whether the verdict is in
            why = pending(row) if pending is not None else ("" if score is not None else "no verdict yet")
            out[t] = ItemOutcome(None if score is None else float(score), mode, step_marks(row), why, judge, not why)
            continue
        out[t] = ItemOutcome(
            None if score is None else float(score),
            mode,
            step_marks(row),
            "" if score is not None else "no answer to score",
        )
    return out
