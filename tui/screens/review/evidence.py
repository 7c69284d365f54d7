"""The evidence beside a rated target: the task's gold answer and the run's own per-item score.

The gold answer is task data the rater sees anyway. The per-item score is the automatic judgement of
the answer, so it follows the rule blind mode applies to a checkpoint's automatic pass/fail: hidden
while the rater still owes a blind rating here (``hidden``), shown once they have rated.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from sqlmodel import Session

from annotation.answers import describe
from annotation.review.targets import Target, task_of, trajectory_of
from evaluation.scoring.item_outcome import trajectory_outcome
from tui.safe_text import visible
from tui.widgets.review.panels import evidence_text


@dataclass(frozen=True)
class Evidence:
    gold: str = ""  # the task's gold answer, readable ("" when the task has none)
    score: str = ""  # ItemOutcome.describe(): "right (1.00)", "judged 0.72 by LLM judge …", … ("" without a trajectory)
    right: bool | None = None
    score_hidden: bool = False  # blind: the rater has not rated yet
    note: str = ""  # e.g. the task was edited after the run

    @property
    def empty(self) -> bool:
        return not (self.gold or self.score or self.score_hidden)


def evidence(
    session: Session, target: Target, *, hide_score: bool, known_score: tuple[str, bool | None] | None = None
) -> Evidence:
    """Gold answer and per-item score for ``target``; the score is left out when ``hide_score``.
    ``known_score`` (described score, right) is the score a caller already has for this trajectory (the
    adjudication queue scored every run once to flag it), so the run is not scored again."""
    try:
        task = task_of(session, target)
        traj = trajectory_of(session, target)
    except Exception:  # a dangling target: nothing to show beside it
        return Evidence()
    spec = (task.answer_spec or {}) if task is not None else {}
    gold = describe(spec) if spec.get("kind") not in (None, "none") else ""
    if traj is None or traj.id is None:
        return Evidence(gold)
    note = ""
    if task is not None and traj.task_revision < task.revision:
        note = f"task edited after this run: scored on revision {traj.task_revision}, gold is revision {task.revision}"
    if hide_score:
        return Evidence(gold, score_hidden=True, note=note)
    if known_score is not None:
        return Evidence(gold, known_score[0], known_score[1], note=note)
    outcome = trajectory_outcome(session, traj.id)
    return Evidence(gold, outcome.describe(), outcome.right, note=note)


def with_evidence(content: Text, ev: Evidence) -> Text:
    """The target's content with the gold answer and the run's score after it."""
    if not ev.empty:
        content.append_text(evidence_text(ev.gold, ev.score, ev.right, ev.score_hidden, ev.note))
    return content


def evidence_line(ev: Evidence) -> Text:
    """Gold answer and score on one line, for a summary that stays in sight (the adjudication values)."""
    out = Text()
    if ev.gold:
        out.append("gold ", style="dim")
        out.append(visible(ev.gold))
    if ev.score_hidden or ev.score:
        out.append("  ·  run's score " if ev.gold else "run's score ", style="dim")
        if ev.score_hidden:
            out.append("hidden until you rate (blind)", style="yellow")
        else:
            out.append(visible(ev.score), style="dim" if ev.right is None else "bold green" if ev.right else "bold red")
    if ev.note:
        out.append(f"\n{visible(ev.note)}", style="yellow")
    return out
