"""What a rater may see of a target: ``rating_view``.

A blind rater sees the material to judge (the task, the trajectory or event, the checkpoint) but no
judge verdicts, no other person's ratings and no adjudication — and, for checkpoint results, not the
automatic pass/fail either — until they have rated the target on that scale themselves. Rating a
``verdict`` target shows that one verdict (it is what is being rated), never the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, select, col

from annotation.review.annotators import get_annotator
from annotation.review.ratings import ratings
from annotation.review.scales import get_scale
from annotation.review.targets import Target, task_of, trajectory_of
from store.models import (
    PREFERENCE_SCALE,
    Adjudication,
    Annotator,
    Assignment,
    Checkpoint,
    CheckpointResult,
    Event,
    Judge,
    Preference,
    Trajectory,
    Verdict,
    preference_pair_part,
)


@dataclass(frozen=True)
class RatingView:
    target: Target
    scale: dict[str, Any]
    blind: bool
    rated: bool
    content: dict[str, Any]
    own_rating: dict[str, Any] | None = None
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    other_ratings: list[dict[str, Any]] = field(default_factory=list)
    adjudications: list[dict[str, Any]] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target.to_dict(),
            "scale": self.scale,
            "blind": self.blind,
            "rated": self.rated,
            "content": self.content,
            "own_rating": self.own_rating,
            "verdicts": self.verdicts,
            "other_ratings": self.other_ratings,
            "adjudications": self.adjudications,
            "hidden": self.hidden,
        }


def _verdict_dict(v: Verdict, judge: str) -> dict[str, Any]:
    return {
        "id": v.id,
        "judge": judge,
        "label": v.label,
        "score": v.score,
        "rationale": v.rationale,
        "parsed": v.parsed,
    }


def _content(session: Session, target: Target, blind: bool) -> dict[str, Any]:
    task = task_of(session, target)
    out: dict[str, Any] = {}
    if task is not None:
        out["task"] = {"id": task.id, "query": task.query, "category": task.category, "revision": task.revision}
    traj = trajectory_of(session, target)
    if traj is not None and target.kind != "verdict":
        out["trajectory"] = {"id": traj.id, "status": traj.status, "final_answer": traj.final_answer}
    if target.kind in ("trajectory", "block_question", "image_question"):
        events = session.exec(select(Event).where(Event.trajectory_id == target.id).order_by(col(Event.ordinal))).all()
        out["events"] = [
            {"ordinal": e.ordinal, "kind": e.kind, "payload": e.payload, "failed": e.failed} for e in events
        ]
        if target.part:
            out["part"] = target.part
    elif target.kind == "event":
        e = session.get(Event, target.id)
        assert e is not None
        out["event"] = {"ordinal": e.ordinal, "kind": e.kind, "payload": e.payload, "failed": e.failed}
    elif target.kind == "checkpoint_result":
        cr = session.get(CheckpointResult, target.id)
        assert cr is not None
        cp = session.get(Checkpoint, cr.checkpoint_id)
        out["checkpoint"] = (
            {
                "key": cp.key,
                "axis": cp.axis,
                "description": cp.description,
                "visual_check": cp.visual_check,
                "search_check": cp.search_check,
                "answer_check": cp.answer_check,
            }
            if cp
            else None
        )
        if cr.matched_event_id is not None:
            e = session.get(Event, cr.matched_event_id)
            out["matched_event"] = {"ordinal": e.ordinal, "kind": e.kind, "payload": e.payload} if e else None
        if not blind:
            out["automatic_result"] = {"passed": cr.passed, "score": cr.score, "method": cr.method, "detail": cr.detail}
    elif target.kind == "verdict":
        v = session.get(Verdict, target.id)
        assert v is not None
        judge = session.get(Judge, v.judge_id)
        out["verdict"] = {**_verdict_dict(v, judge.name if judge else str(v.judge_id)), "raw_output": v.raw_output}
        out["verdict_target"] = {"kind": v.target_kind, "id": v.target_id, "part": v.target_part}
        if traj is not None:
            out["trajectory"] = {"id": traj.id, "status": traj.status, "final_answer": traj.final_answer}
    return out


def rating_view(
    session: Session, annotator: str, target: Target, scale: str, *, blind: bool | None = None
) -> RatingView:
    """Everything ``annotator`` may see while rating ``target`` on ``scale``.

    ``blind`` defaults to the annotator's assignment's flag, and to True when unassigned: hiding is
    the safe default, revealing is a choice.
    """
    person = get_annotator(session, annotator)
    spec = get_scale(session, scale)
    if blind is None:
        a = session.exec(
            select(Assignment).where(
                Assignment.annotator_id == person.id,
                Assignment.target_kind == target.kind,
                Assignment.target_id == target.id,
                Assignment.target_part == target.part,
                Assignment.scale == spec.name,
            )
        ).first()
        blind = True if a is None else a.blind
    current = ratings(session, target=target, scale=spec.name)
    mine = next((r for r in current if r.annotator == person.name), None)
    rated = mine is not None
    # pending blind work elsewhere in the same trajectory hides this target's judgements too, even
    # for a reviewer who opened it unblinded
    hide = (blind and not rated) or blind_scope(session, person.name).hides(session, target)
    content = _content(session, target, hide)
    hidden: list[str] = []
    verdicts: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    adjudications: list[dict[str, Any]] = []
    if hide:
        hidden = ["verdicts", "other_ratings", "adjudications"]
        if target.kind == "checkpoint_result":
            hidden.append("automatic_result")
    else:
        rows = session.exec(
            select(Verdict, Judge.name)
            .join(Judge, col(Judge.id) == col(Verdict.judge_id))
            .where(
                Verdict.target_kind == target.kind, Verdict.target_id == target.id, Verdict.target_part == target.part
            )
            .order_by(col(Verdict.id))
        ).all()
        verdicts = [_verdict_dict(v, name) for v, name in rows]
        others = [r.to_dict() for r in current if r.annotator != person.name]
        adj = session.exec(
            select(Adjudication, Annotator.name)
            .join(Annotator, col(Annotator.id) == col(Adjudication.reviewer_id))
            .where(
                Adjudication.target_kind == target.kind,
                Adjudication.target_id == target.id,
                Adjudication.target_part == target.part,
                Adjudication.scale == spec.name,
            )
            .order_by(col(Adjudication.id))
        ).all()
        adjudications = [
            {
                "id": a.id,
                "reviewer": name,
                "final_value": a.final_value,
                "rationale": a.rationale,
                "overrides": a.overrides,
            }
            for a, name in adj
        ]
    return RatingView(
        target=target,
        scale=spec.to_dict(),
        blind=blind,
        rated=rated,
        content=content,
        own_rating=mine.to_dict() if mine else None,
        verdicts=verdicts,
        other_ratings=others,
        adjudications=adjudications,
        hidden=hidden,
    )


# ------------------------------------------------------------------------------------------------
# Browsing outside the rating queue: one check for every screen and listing that shows judgements
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlindScope:
    """What ``actor`` may not see yet: judgements on targets they still have to rate blind, and who
    made and how well scored the runs those targets come from. The one blind policy: every CLI command,
    screen, report and ``serve`` view asks it (``tui.blind_view`` applies it to each kind of output).

    A pending blind assignment hides the verdicts, other people's ratings and adjudications of its
    target and of everything in the same trajectory (a verdict on the answer tells how to rate a step
    of it); a pending checkpoint-result assignment also hides that trajectory's automatic pass/fail
    marks; a pair still to judge (preferences) hides both runs' trajectories of that task. The actor's
    own ratings stay visible. A run with any pending blind item (``runs``) keeps its model, endpoint and
    name hidden, and its scores (totals, per-item outcomes, comparisons, leaderboards): knowing that
    run 1 is gpt-good and got task 3 right tells which answer to prefer. Someone with nothing pending
    sees everything.
    """

    actor: str | None
    targets: frozenset[tuple[str, int, str]] = frozenset()
    tasks: frozenset[int] = frozenset()
    trajectories: frozenset[int] = frozenset()
    checkpoint_trajectories: frozenset[int] = frozenset()
    runs: tuple[tuple[int, PendingWork], ...] = ()  # run id -> the blind work pending on it, by run id

    @property
    def active(self) -> bool:
        return bool(self.targets)

    def hides_trajectory(self, trajectory_id: int | None) -> bool:
        return trajectory_id is not None and trajectory_id in self.trajectories

    def hides_checks(self, trajectory_id: int | None) -> bool:
        return trajectory_id is not None and trajectory_id in self.checkpoint_trajectories

    def hides_run(self, run_id: int | None) -> bool:
        """True when the run's model, endpoint, name and scores must not be shown to the actor."""
        return run_id is not None and any(r == run_id for r, _ in self.runs)

    def hidden_runs(self, run_ids: Iterable[int | None]) -> list[int]:
        """The runs among ``run_ids`` the actor may not see the model or scores of, in the order given."""
        return [r for r in dict.fromkeys(run_ids) if r is not None and self.hides_run(r)]

    def why_hidden(self, run_ids: Iterable[int | None], what: str = "model hidden") -> str:
        """One line saying what is hidden and why, e.g. "model hidden: erin has 3 blind ratings
        pending on run 1" ("" when none of ``run_ids`` is hidden)."""
        hidden = self.hidden_runs(run_ids)
        if not hidden:
            return ""
        work = PendingWork()
        for r, w in self.runs:
            if r in hidden:
                work = work + w
        runs = (
            f"run {hidden[0]}"
            if len(hidden) == 1
            else "runs " + ", ".join(map(str, hidden[:-1])) + f" and {hidden[-1]}"
        )
        return f"{what}: {self.actor} has {work.describe()} pending on {runs}"

    def why_any_hidden(self, what: str) -> str:
        """``why_hidden`` over every hidden run: for figures that pool many runs (a per-model ranking)."""
        return self.why_hidden([r for r, _ in self.runs], what)

    @property
    def pending_pairs(self) -> int:
        """Preference pairs still to judge blind (the leaderboard of people's preferences waits for them)."""
        return sum(1 for kind, _id, part in self.targets if kind == "task" and part.startswith("pair:"))

    def leaderboard_note(self) -> str:
        """Why the preference leaderboard is hidden ("" when it may be shown)."""
        n = self.pending_pairs
        return f"preference leaderboard hidden: {self.actor} still has {n} pair(s) to judge blind" if n else ""

    def hides(self, session: Session, target: Target) -> bool:
        """True when judgements of ``target`` must not be shown to the actor."""
        if not self.targets:
            return False
        if (target.kind, target.id, target.part) in self.targets:
            return True
        if target.kind == "task":
            return target.id in self.tasks
        try:
            traj = trajectory_of(session, target)
        except Exception:  # a dangling target id: nothing to reveal
            return False
        return traj is not None and traj.id in self.trajectories

    def shows_rating_by(self, session: Session, annotator: str, target: Target) -> bool:
        """A rating is shown when it is the actor's own or its target is not hidden."""
        return annotator == self.actor or not self.hides(session, target)


@dataclass(frozen=True)
class PendingWork:
    """How much blind work is pending on a run: ratings and preferences, for the reason line."""

    ratings: int = 0
    preferences: int = 0

    def __add__(self, other: PendingWork) -> PendingWork:
        return PendingWork(self.ratings + other.ratings, self.preferences + other.preferences)

    def describe(self) -> str:
        parts = [
            f"{n} blind {word}{'s' if n != 1 else ''}"
            for n, word in ((self.ratings, "rating"), (self.preferences, "preference"))
            if n
        ]
        return " and ".join(parts)


def blind_scope(session: Session, actor: str | None) -> BlindScope:
    """The actor's pending blind assignments (assigned blind, not rated on that scale yet)."""
    if not actor:
        return BlindScope(actor)
    person = session.exec(select(Annotator).where(Annotator.name == actor)).first()
    if person is None:
        return BlindScope(actor)
    assigned = session.exec(
        select(Assignment).where(Assignment.annotator_id == person.id, Assignment.blind == True)  # noqa: E712
    ).all()
    if not assigned:
        return BlindScope(actor)
    rated = {(r.target.kind, r.target.id, r.target.part, r.scale) for r in ratings(session, annotator=actor)}
    rated |= {
        ("task", p.task_id, preference_pair_part(p.run_a_id, p.run_b_id), PREFERENCE_SCALE)
        for p in session.exec(select(Preference).where(Preference.annotator_id == person.id)).all()
    }
    pending = [a for a in assigned if (a.target_kind, a.target_id, a.target_part, a.scale) not in rated]
    targets: set[tuple[str, int, str]] = set()
    runs: dict[int, PendingWork] = {}
    tasks: set[int] = set()
    trajs: set[int] = set()
    checks: set[int] = set()
    for a in pending:
        if a.scale == PREFERENCE_SCALE:  # a pair still to judge: both runs' answers to the task are hidden
            targets.add((a.target_kind, a.target_id, a.target_part))
            pair = [int(r) for r in a.target_part.removeprefix("pair:").split("-") if r.isdigit()]
            for run_id in pair:
                runs[run_id] = runs.get(run_id, PendingWork()) + PendingWork(preferences=1)
            trajs |= {
                t
                for t in session.exec(
                    select(Trajectory.id).where(
                        Trajectory.task_id == a.target_id,
                        Trajectory.run_id.in_(pair),  # type: ignore[attr-defined]
                    )
                ).all()
                if t is not None
            }
            continue
        target = Target(a.target_kind, a.target_id, a.target_part)
        targets.add((target.kind, target.id, target.part))
        try:
            traj = trajectory_of(session, target)
            task = task_of(session, target)
        except Exception:  # the target was deleted: nothing of it to hide
            continue
        if task is not None and target.kind == "task":
            tasks.add(task.id or 0)
        if traj is not None:
            trajs.add(traj.id or 0)
            runs[traj.run_id] = runs.get(traj.run_id, PendingWork()) + PendingWork(ratings=1)
            if target.kind == "checkpoint_result":
                checks.add(traj.id or 0)
    return BlindScope(
        actor,
        frozenset(targets),
        frozenset(tasks),
        frozenset(trajs),
        frozenset(checks),
        tuple(sorted(runs.items())),
    )
