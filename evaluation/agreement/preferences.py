"""People's pairwise preferences read back from the store: the Bradley–Terry leaderboard and agreement.

Every stored judgement (one per person, task and pair of runs) is one comparison between the two runs'
models; a model is the run's endpoint name (or the run's name), as in ``rankings``. Judgements between
two runs of the same model say nothing about models and are left out (counted in the notes).

Agreement treats each (task, pair) as a unit rated on a nominal a / b / tie scale, so the report is
the one ``chainmark agreement`` prints (``summary.agreement_report``): percent agreement, Fleiss' κ,
Krippendorff's α and Cohen's κ per pair of people, with bootstrap CIs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from evaluation.agreement.bradley_terry import Comparison, Standing, leaderboard
from evaluation.agreement.matrix import HUMAN, RatingMatrix, ScaleInfo, Unit
from evaluation.agreement.rankings import model_of_run
from evaluation.agreement.summary import AgreementReport, agreement_report
from store.models import PREFERENCE_SCALE, Annotator, Benchmark, Preference, Run, preference_pair_part

CHOICES = ("a", "b", "tie")
SCALE = ScaleInfo(PREFERENCE_SCALE, "nominal", list(CHOICES))


@dataclass(frozen=True)
class Judgement:
    """One stored preference, in canonical (run_a < run_b) terms, with the runs' model names."""

    annotator: str
    task_id: int
    run_a: int
    run_b: int
    model_a: str
    model_b: str
    choice: str
    shown_left: int
    reason: str | None

    @property
    def unit(self) -> Unit:
        return Unit("task", self.task_id, preference_pair_part(self.run_a, self.run_b))

    def to_dict(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "task_id": self.task_id,
            "run_a": self.run_a,
            "run_b": self.run_b,
            "model_a": self.model_a,
            "model_b": self.model_b,
            "choice": self.choice,
            "shown_left": self.shown_left,
            "reason": self.reason,
        }


def judgements(session: Session, *, bench: str | None = None, run_ids: list[int] | None = None) -> list[Judgement]:
    """Stored preferences in a fixed order (task, pair, person), optionally of one benchmark's runs or
    only between the given runs."""
    stmt = select(Preference, Annotator.name).join(Annotator, col(Annotator.id) == col(Preference.annotator_id))
    if bench is not None:
        b = session.exec(select(Benchmark).where(Benchmark.name == bench)).first()
        if b is None:
            raise ValueError(f"no benchmark named {bench!r}")
        runs = list(session.exec(select(Run.id).where(Run.benchmark_id == b.id)).all())
        stmt = stmt.where(Preference.run_a_id.in_(runs), Preference.run_b_id.in_(runs))  # type: ignore[attr-defined]
    if run_ids is not None:
        stmt = stmt.where(Preference.run_a_id.in_(run_ids), Preference.run_b_id.in_(run_ids))  # type: ignore[attr-defined]
    rows = session.exec(
        stmt.order_by(
            Preference.task_id,  # type: ignore[arg-type]
            Preference.run_a_id,  # type: ignore[arg-type]
            Preference.run_b_id,  # type: ignore[arg-type]
            Annotator.name,
        )
    ).all()
    models: dict[int, str] = {}

    def model(run_id: int) -> str:
        if run_id not in models:
            models[run_id] = model_of_run(session, run_id) or f"run {run_id}"
        return models[run_id]

    return [
        Judgement(
            name,
            p.task_id,
            p.run_a_id,
            p.run_b_id,
            model(p.run_a_id),
            model(p.run_b_id),
            p.choice,
            p.shown_left_run_id,
            p.reason,
        )
        for p, name in rows
    ]


@dataclass
class Leaderboard:
    standings: list[Standing]
    judgements: int
    notes: list[str] = field(default_factory=list)
    resamples: int = 1000
    seed: int = 0
    decisive: int = 0  # judgements that were not ties
    shown_first_won: int = 0  # of those, how many went to the answer shown as A (position bias)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "bradley-terry (ties = half wins), MM fit, Elo-like scale 1000 ± 400·log10",
            "resamples": self.resamples,
            "seed": self.seed,
            "judgements": self.judgements,
            "models": [s.to_dict() for s in self.standings],
            "notes": self.notes,
            "position": {
                "decisive": self.decisive,
                "shown_as_a_won": self.shown_first_won,
                "share": round(self.shown_first_won / self.decisive, 6) if self.decisive else None,
            },
        }

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """Headers and rows as reports print them."""
        headers = ["rank", "model", "score", "95% CI", "comparisons", "wins", "ties", "losses", "win rate"]
        rows = [
            [
                i + 1,
                s.model,
                round(s.score, 1),
                "–" if s.ci is None else f"{s.ci[0]:.0f} – {s.ci[1]:.0f}",
                s.comparisons,
                s.wins,
                s.ties,
                s.losses,
                None if s.win_rate is None else round(s.win_rate, 3),
            ]
            for i, s in enumerate(self.standings)
        ]
        return headers, rows


def preference_leaderboard(
    session: Session,
    *,
    bench: str | None = None,
    run_ids: list[int] | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> Leaderboard:
    found = judgements(session, bench=bench, run_ids=run_ids)
    same = [j for j in found if j.model_a == j.model_b]
    comps = [Comparison(j.model_a, j.model_b, j.choice) for j in found if j.model_a != j.model_b]
    notes = [f"{len(same)} judgement(s) between runs of the same model left out"] if same else []
    decisive = [j for j in found if j.model_a != j.model_b and j.choice != "tie"]
    first = sum(1 for j in decisive if (j.run_a if j.choice == "a" else j.run_b) == j.shown_left)
    return Leaderboard(
        leaderboard(comps, resamples=resamples, seed=seed), len(comps), notes, resamples, seed, len(decisive), first
    )


def preference_matrix(found: list[Judgement]) -> RatingMatrix:
    """People × (task, pair) units, valued a / b / tie: the shape every agreement statistic reads."""
    raters = sorted({f"{HUMAN}:{j.annotator}" for j in found})
    units = sorted({j.unit for j in found})
    cells = {(f"{HUMAN}:{j.annotator}", j.unit): j.choice for j in found}
    return RatingMatrix(SCALE, "", raters, units, cells, {})


def preference_agreement(
    session: Session, *, bench: str | None = None, resamples: int = 1000, seed: int = 0
) -> AgreementReport:
    return agreement_report(preference_matrix(judgements(session, bench=bench)), resamples=resamples, seed=seed)


def leaderboard_tables(session: Session, run_ids: list[int]) -> list[tuple[str, list[str], list[list[Any]]]]:
    """The leaderboard over preferences between these runs, as a report table (none without any)."""
    board = preference_leaderboard(session, run_ids=run_ids)
    if not board.standings:
        return []
    headers, rows = board.table()
    return [
        (
            f"human preferences: Bradley–Terry leaderboard ({board.judgements} judgement(s), 95% bootstrap CI)",
            headers,
            rows,
        )
    ]


__all__ = [
    "Judgement",
    "Leaderboard",
    "judgements",
    "leaderboard_tables",
    "preference_agreement",
    "preference_leaderboard",
    "preference_matrix",
]
