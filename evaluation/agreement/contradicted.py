"""Disagreements whose raters contradict the run's own score: where a reviewer should look first.

A rater (human or judge) who gives a clear yes/no on a trajectory's answer that the run's scorer
contradicts (says correct on an answer scored wrong, or the reverse) is either wrong, or the scorer
is. Only targets that judge the final answer (a trajectory, whole or its answer part) have a per-item
score to contradict; values on other scales or parts make no claim. The per-item score is the
benchmark profile's own (``evaluation.scoring.item_outcome``), each run scored once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from evaluation.agreement.disagreements import Disagreement
from evaluation.agreement.matrix import Unit
from evaluation.contradictions import (
    EXTRACTORS,
    Contradiction,
    Extraction,
    about_answer,
    literal_contradictions,
    rating_contradictions,
    read_letters,
    reads_the_answer,
)
from evaluation.scoring.item_outcome import trajectory_outcomes
from store.models import Judge, Trajectory, Verdict

FlagKey = tuple[Unit, str, str]


def flag_key(d: Disagreement) -> FlagKey:
    return (d.unit, d.scale, d.dimension)


@dataclass(frozen=True)
class Flag:
    """The run's score on a disagreement's answer and the raters that contradict it."""

    score: str  # ItemOutcome.describe(): "right (1.00)", "wrong (0.00)", "judged 0.72 by LLM judge …", …
    right: bool | None
    contradictions: tuple[Contradiction, ...] = ()

    @property
    def contradicted(self) -> bool:
        return bool(self.contradictions)

    def summary(self) -> str:
        """``human:bob, judge:judge-b vs scored wrong (0.00)``: who contradicts what ("" when nobody does)."""
        if not self.contradictions:
            return ""
        misread = [c.line() for c in self.contradictions if c.text.startswith(MISREAD)]
        against = [c.who for c in self.contradictions if not c.text.startswith(MISREAD)]
        return "; ".join([*misread, *([f"{', '.join(against)} vs scored {self.score}"] if against else [])])

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_score": self.score,
            "right": self.right,
            "contradictions": [{"rater": c.who, "text": c.text} for c in self.contradictions],
        }


def answer_trajectory(unit: Unit) -> int | None:
    """The trajectory whose final answer this unit judges, or None (a step, a checkpoint, a task...)."""
    return unit.id if unit.kind == "trajectory" and about_answer(unit.part) else None


def flag_disagreements(session: Session, items: list[Disagreement]) -> dict[FlagKey, Flag]:
    """A flag for each disagreement about a final answer; others get none."""
    ids = {t for d in items if (t := answer_trajectory(d.unit)) is not None}
    outcomes = trajectory_outcomes(session, ids)
    misread = misread_answers(session, ids)
    out: dict[FlagKey, Flag] = {}
    for d in items:
        t = answer_trajectory(d.unit)
        outcome = outcomes.get(t) if t is not None else None
        if outcome is None:
            continue
        wrong_reading = misread.get(t, []) if t is not None else []
        # A score decided by a misreading of the answer is no measure of the raters: the misreading is
        # what is flagged, not the rater who read the answer as it is written.
        right = None if wrong_reading else outcome.right
        found = wrong_reading + rating_contradictions(d.values, right, outcome.score)
        out[flag_key(d)] = Flag(outcome.describe(), outcome.right, tuple(found))
    return out


MISREAD = "contradicts the model's answer"
"""How a misreading's text starts (``evaluation.contradictions.literal_contradictions``)."""


def misread_answers(session: Session, trajectory_ids: set[int]) -> dict[int, list[Contradiction]]:
    """Per trajectory, the extractor verdicts that read another option than its answer literally names."""
    if not trajectory_ids:
        return {}
    answers = dict(
        session.exec(select(Trajectory.id, Trajectory.final_answer).where(col(Trajectory.id).in_(trajectory_ids))).all()
    )
    read: dict[int, list[Extraction]] = {}
    for v, name in session.exec(
        select(Verdict, Judge.name)
        .join(Judge, col(Judge.id) == Verdict.judge_id)
        .where(
            Verdict.target_kind == "trajectory",
            col(Verdict.target_id).in_(trajectory_ids),
            col(Judge.template).in_(EXTRACTORS),
        )
        .order_by(col(Verdict.id))
    ).all():
        if reads_the_answer(v.target_part):
            read.setdefault(v.target_id, []).append(
                Extraction(f"verdict:{v.id}", f"judge:{name}", read_letters(v.label, v.parsed))
            )
    return {t: found for t, found in ((t, literal_contradictions(e, answers.get(t))) for t, e in read.items()) if found}


def contradicted_first(items: list[Disagreement], flags: dict[FlagKey, Flag]) -> list[Disagreement]:
    """The same items, those with the most raters contradicting the run's score first (on a yes/no
    scale every scored split has someone on the wrong side of the score, so the count is what tells
    them apart); ties keep their order (largest split first)."""

    def against(d: Disagreement) -> int:
        flag = flags.get(flag_key(d))
        return len(flag.contradictions) if flag is not None else 0

    return sorted(items, key=lambda d: -against(d))
