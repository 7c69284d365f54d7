"""Judges against each other at the level of models and mistakes.

* Model rankings (ATP-Bench Table 8b): each judge's mean score per model, then Spearman ρ between
  judges over the models both scored. A model is the run's endpoint name (or the run's name).
* Error correlation: how alike judges' errors are against reference values (adjudicated, else the
  humans' consensus), with the effective number of independent judges.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from evaluation.agreement import stats
from evaluation.agreement.matrix import JUDGE, RatingMatrix, Unit, rater_kind, reference_values
from store.models import CheckpointResult, Event, ModelEndpoint, Run, Trajectory, Verdict

_TRAJECTORY_KINDS = ("trajectory", "block_question", "image_question")


def trajectory_id(session: Session, unit: Unit) -> int | None:
    """The trajectory a rated unit lives in (None for tasks or unknown kinds)."""
    if unit.kind in _TRAJECTORY_KINDS:
        return unit.id
    if unit.kind == "event":
        e = session.get(Event, unit.id)
        return e.trajectory_id if e else None
    if unit.kind == "checkpoint_result":
        cr = session.get(CheckpointResult, unit.id)
        return cr.trajectory_id if cr else None
    if unit.kind == "verdict":
        v = session.get(Verdict, unit.id)
        return trajectory_id(session, Unit(v.target_kind, v.target_id, v.target_part)) if v else None
    return None


def model_of_trajectory(session: Session, traj_id: int) -> str | None:
    traj = session.get(Trajectory, traj_id)
    return model_of_run(session, traj.run_id) if traj else None


def model_of_run(session: Session, run_id: int) -> str | None:
    """The run's endpoint name, else the run's name, else ``run <id>``."""
    run = session.get(Run, run_id)
    if run is None:
        return None
    if run.endpoint_id is not None:
        ep = session.get(ModelEndpoint, run.endpoint_id)
        if ep is not None:
            return ep.name
    return run.name or f"run {run.id}"


@dataclass
class ModelRanking:
    scale: str
    dimension: str
    mean_scores: dict[str, dict[str, float]]
    spearman: dict[str, dict[str, stats.Estimate]]
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "dimension": self.dimension,
            "mean_scores": {j: {m: round(s, 6) for m, s in ms.items()} for j, ms in self.mean_scores.items()},
            "spearman": {a: {b: e.to_dict() for b, e in row.items()} for a, row in self.spearman.items()},
            "reason": self.reason,
        }


def model_ranking(session: Session, matrix: RatingMatrix) -> ModelRanking:
    """Inter-judge Spearman of per-model mean scores (numeric/ordinal scales only)."""
    judges = [r for r in matrix.raters if rater_kind(r) == JUDGE]
    if not (matrix.scale.numeric or matrix.scale.level == "ordinal"):
        return ModelRanking(matrix.scale.name, matrix.dimension, {}, {}, "needs a numeric or ordinal scale")
    models: dict[Unit, str | None] = {}
    for u in matrix.units:
        tid = trajectory_id(session, u)
        models[u] = model_of_trajectory(session, tid) if tid is not None else None
    rows = matrix.ranked_rows(judges) if matrix.scale.level == "ordinal" else matrix.rows(judges)
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j, row in zip(judges, rows):
        for u, v in zip(matrix.units, row):
            if v is not None and models[u] is not None:
                sums[j][models[u]].append(float(v))  # type: ignore[index]
    means = {j: {m: sum(vs) / len(vs) for m, vs in ms.items()} for j, ms in sums.items()}
    reason = None
    if len(means) < 2:
        reason = "needs two or more judges with scores"
    elif len({m for ms in means.values() for m in ms}) < 2:
        reason = "needs two or more models"
    return ModelRanking(matrix.scale.name, matrix.dimension, means, stats.rank_correlation_matrix(means), reason)


def judge_error_correlation(session: Session, matrix: RatingMatrix) -> tuple[stats.ErrorCorrelation, str]:
    """Correlation of judges' errors against the reference; returns it and where the reference came from."""
    judges = [r for r in matrix.raters if rater_kind(r) == JUDGE]
    ref, source = reference_values(session, matrix)
    values = {j: {u: matrix.cells[(j, u)] for u in matrix.units if (j, u) in matrix.cells} for j in judges}
    nominal = matrix.scale.level == "nominal" or not matrix.scale.numeric
    return stats.error_correlation(values, ref, nominal=nominal), source


def within_runs(session: Session, matrix: RatingMatrix, run_ids: set[int]) -> RatingMatrix:
    """The part of ``matrix`` about targets inside these runs' trajectories (a report on runs shows
    agreement on what those runs produced, not on every rated target)."""
    from dataclasses import replace

    keep = []
    for unit in matrix.units:
        tid = trajectory_id(session, unit)
        trajectory = session.get(Trajectory, tid) if tid is not None else None
        if trajectory is not None and trajectory.run_id in run_ids:
            keep.append(unit)
    kept = set(keep)
    cells = {k: v for k, v in matrix.cells.items() if k[1] in kept}
    raters = [r for r in matrix.raters if any((r, u) in cells for u in keep)]
    return replace(
        matrix,
        units=keep,
        raters=raters,
        cells=cells,
        sources={k: v for k, v in matrix.sources.items() if k[1] in kept},
    )
