"""The numbers behind the agreement dashboard, computed in a worker exactly as ``chainmark agreement``.

The statistics come from ``evaluation.agreement.summary.agreement_report`` over the same matrices
(``collect``) with the same bootstrap defaults, so the dashboard and the CLI print the same κ and α.
The screen adds what a table cannot show well: confusion matrices per rater pair, each rater's score
distribution and agreement per task category.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from annotation.review.targets import Target, task_of
from evaluation.agreement import stats
from evaluation.agreement.matrix import HUMAN, JUDGE, RatingMatrix, collect, rater_kind
from evaluation.agreement.preferences import judgements, preference_leaderboard, preference_matrix
from evaluation.agreement.rankings import judge_error_correlation, model_ranking
from evaluation.agreement.summary import agreement_report
from store.models import PREFERENCE_SCALE
from annotation.review.blind import BlindScope
from tui.blind_view import scope_for, visible_matrices
from tui.screens.review.adjudication_data import scale_names

DEFAULT_RESAMPLES = 1000
"""Same as ``chainmark agreement --bootstrap`` so both show the same confidence intervals."""


@dataclass(frozen=True)
class DashboardQuery:
    scale: str = ""
    matrix_index: int = 0
    raters: tuple[str, ...] = ()
    target_kind: str = ""
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0


@dataclass(frozen=True)
class Confusion:
    a: str
    b: str
    categories: list[Any]
    counts: list[list[int]]

    @property
    def n(self) -> int:
        return sum(map(sum, self.counts))


@dataclass(frozen=True)
class DashboardData:
    query: DashboardQuery
    scales: list[str]
    scale: str
    titles: list[str]
    report: dict[str, Any] | None
    confusions: list[Confusion] = field(default_factory=list)
    categories: list[Any] = field(default_factory=list)
    distribution: dict[str, list[int]] = field(default_factory=dict)
    per_category: list[tuple[str, float | None, int]] = field(default_factory=list)
    leaderboard: dict[str, Any] | None = None  # chainmark prefs leaderboard --json, or None
    leaderboard_note: str = ""


def _categories(matrix: RatingMatrix) -> list[Any]:
    seen = {v for v in matrix.cells.values()}
    ordered = (
        [v for v in matrix.scale.values if v in seen] if matrix.scale.level == "nominal" else list(matrix.scale.values)
    )
    extra = sorted((v for v in seen if v not in matrix.scale.values), key=lambda v: (str(type(v)), v))
    return ordered + extra


def confusion(matrix: RatingMatrix, a: str, b: str, categories: list[Any]) -> Confusion:
    index = {c: i for i, c in enumerate(categories)}
    counts = [[0] * len(categories) for _ in categories]
    for u in matrix.units:
        va, vb = matrix.cells.get((a, u)), matrix.cells.get((b, u))
        if va is not None and vb is not None:
            counts[index[va]][index[vb]] += 1
    return Confusion(a, b, categories, counts)


def _per_category(session: Session, matrix: RatingMatrix) -> list[tuple[str, float | None, int]]:
    groups: dict[str, list[int]] = {}
    for j, u in enumerate(matrix.units):
        try:
            task = task_of(session, Target(u.kind, u.id, u.part))
        except ValueError:
            task = None
        groups.setdefault((task.category if task else None) or "(none)", []).append(j)
    rows = matrix.rows()
    out = []
    for cat in sorted(groups):
        cols = groups[cat]
        est = stats.percent_agreement([[r[j] for j in cols] for r in rows])
        out.append((cat, est.value, est.n))
    return out


def report_dict(
    session: Session, matrix: RatingMatrix, resamples: int, seed: int, scope: BlindScope | None = None
) -> dict[str, Any]:
    """The agreement report as ``chainmark agreement --json`` prints it for this matrix; the judges'
    per-model ranking is left out while ``scope`` hides any run's model (blind mode)."""
    data = agreement_report(matrix, resamples=resamples, seed=seed).to_dict()
    if sum(1 for r in matrix.raters if rater_kind(r) == JUDGE) >= 2:
        if scope is not None and scope.runs:
            data["notes"] = [*data.get("notes", []), scope.why_any_hidden("model ranking hidden")]
        else:
            data["model_ranking"] = model_ranking(session, matrix).to_dict()
        errors, source = judge_error_correlation(session, matrix)
        data["judge_errors"] = {**errors.to_dict(), "reference": source}
    return data


def dashboard_data(session: Session, q: DashboardQuery, viewer: str | None = None) -> DashboardData:
    """The dashboard's numbers over the targets ``viewer`` may see (blind work still to do is left out)."""
    names = []
    matrices_by_scale: dict[str, list[RatingMatrix]] = {}
    scope = scope_for(session, viewer)
    for name in scale_names(session):
        ms = collect(session, name, target_kind=q.target_kind or None, raters=list(q.raters) or None)
        ms = [m for m in visible_matrices(session, scope, ms)[0] if m.units]
        if ms:
            names.append(name)
            matrices_by_scale[name] = ms
    prefs = _preference_matrices(session, q, scope)
    if prefs:
        names.append(PREFERENCE_SCALE)
        matrices_by_scale[PREFERENCE_SCALE] = prefs
    board, board_note = _leaderboard(session, q, scope)
    scale = q.scale if q.scale in matrices_by_scale else (names[0] if names else "")
    if not scale:
        return DashboardData(q, names, "", [], None, leaderboard=board, leaderboard_note=board_note)
    matrices = matrices_by_scale[scale]
    matrix = matrices[q.matrix_index % len(matrices)]
    categories = _categories(matrix)
    rows = matrix.rows()
    index = {c: i for i, c in enumerate(categories)}
    distribution = {}
    for rater, row in zip(matrix.raters, rows):
        counts = Counter(index[v] for v in row if v is not None)
        distribution[rater] = [counts.get(i, 0) for i in range(len(categories))]
    pairs = [(a, b) for i, a in enumerate(matrix.raters) for b in matrix.raters[i + 1 :]]
    confusions = [c for c in (confusion(matrix, a, b, categories) for a, b in pairs) if c.n]
    return DashboardData(
        q,
        names,
        scale,
        [m.title for m in matrices],
        report_dict(session, matrix, q.resamples, q.seed, scope),
        confusions,
        categories,
        distribution,
        _per_category(session, matrix),
        board,
        board_note,
    )


def _preference_matrices(session: Session, q: DashboardQuery, scope: BlindScope) -> list[RatingMatrix]:
    """People's A/B/tie judgements as one more "scale" to cycle to (the ``chainmark prefs agreement`` matrix)."""
    if q.target_kind and q.target_kind != "task":
        return []
    wanted = set(q.raters)
    found = [
        j for j in judgements(session) if not wanted or j.annotator in wanted or f"{HUMAN}:{j.annotator}" in wanted
    ]
    if not found:
        return []
    return [m for m in visible_matrices(session, scope, [preference_matrix(found)])[0] if m.units]


def _leaderboard(session: Session, q: DashboardQuery, scope: BlindScope) -> tuple[dict[str, Any] | None, str]:
    """The Bradley–Terry leaderboard, unless the viewer still has pairs to judge blind."""
    if scope.leaderboard_note():
        return None, scope.leaderboard_note()
    board = preference_leaderboard(session, resamples=q.resamples, seed=q.seed)
    return (board.to_dict(), "") if board.standings else (None, "")
