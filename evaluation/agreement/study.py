"""Study exports in the shape of the seed papers' human-agreement tables.

* **ATP shape** (ATP-Bench §6): people rate how far they agree with each judge's report (ratings of
  ``verdict`` targets on an ordinal/label scale, e.g. ``atp-agreement`` 0-2). One row per judge:
  number rated, *agreement rate* = mean rating rescaled to 0..1 (for 0-2: mean / 2; for a two-label
  scale: share of the positive label), and the share of each value. The paper does not give its
  formula; the rescaled mean is the one used here, and the distribution is printed beside it.
  Plus Table 8b: Spearman ρ between judges' per-model mean scores, per numeric scale.
* **ISG shape** (ISG-Bench Table 3): rows Eval Level × Eval Task × Metric with Size, Avg. and one
  column per task category. *Comparison* rows put a judge against the humans' consensus on the same
  targets (Pearson on interval scales, accuracy otherwise); *Agreement* rows come from people rating
  judges' reports, as above.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select

from evaluation.agreement import stats
from evaluation.agreement.matrix import (
    HUMAN,
    JUDGE,
    RatingMatrix,
    ScaleInfo,
    Unit,
    collect,
    consensus,
    rater_kind,
)
from evaluation.agreement.rankings import model_ranking, trajectory_id
from store.models import Judge, RatingScale, Task, Trajectory, Verdict

LEVEL_NAMES = {
    "block_question": "Block",
    "image_question": "Image",
    "trajectory": "Holistic",
    "event": "Event",
    "checkpoint_result": "Checkpoint",
    "task": "Task",
}


@dataclass
class StudyRow:
    level: str
    task: str
    metric: str
    size: int
    avg: float | None
    by_category: dict[str, float | None] = field(default_factory=dict)
    distribution: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "task": self.task,
            "metric": self.metric,
            "size": self.size,
            "avg": None if self.avg is None else round(self.avg, 6),
            "by_category": {k: None if v is None else round(v, 6) for k, v in self.by_category.items()},
            "distribution": {k: round(v, 6) for k, v in self.distribution.items()},
        }


@dataclass
class Study:
    categories: list[str]
    endorsement: list[StudyRow]
    comparison: list[StudyRow]
    rankings: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": self.categories,
            "endorsement": [r.to_dict() for r in self.endorsement],
            "comparison": [r.to_dict() for r in self.comparison],
            "rankings": self.rankings,
        }


def _category(session: Session, unit: Unit, cache: dict[Unit, str | None]) -> str | None:
    if unit not in cache:
        task_id = unit.id if unit.kind == "task" else None
        if task_id is None:
            tid = trajectory_id(session, unit)
            traj = session.get(Trajectory, tid) if tid is not None else None
            task_id = traj.task_id if traj else None
        task = session.get(Task, task_id) if task_id is not None else None
        cache[unit] = task.category if task and task.category else None
    return cache[unit]


def _endorsement_value(scale: ScaleInfo, value: Any) -> float | None:
    if scale.numeric and scale.span:
        return (float(value) - min(scale.values)) / scale.span
    if len(scale.values) == 2:
        return 1.0 if value == scale.values[0] else 0.0
    if scale.level == "ordinal" and value in scale.values:
        return scale.rank(value) / (len(scale.values) - 1)
    return None


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def endorsement_rows(session: Session, scale_name: str, cats: dict[Unit, str | None]) -> list[StudyRow]:
    """People's ratings of judges' reports (verdict targets), grouped by judge."""
    rows = []
    for matrix in collect(session, scale_name, target_kind="verdict", include_judges=False):
        by_judge: dict[tuple[str, str], list[tuple[Unit, Any]]] = defaultdict(list)
        for (_rater, unit), value in matrix.cells.items():
            v = session.get(Verdict, unit.id)
            judge = session.get(Judge, v.judge_id) if v else None
            if v is None or judge is None:
                continue
            level = LEVEL_NAMES.get(v.target_kind, v.target_kind)
            by_judge[(level, judge.name)].append((Unit(v.target_kind, v.target_id, v.target_part), value))
        for (level, judge), items in sorted(by_judge.items()):
            scores = [(u, _endorsement_value(matrix.scale, val)) for u, val in items]
            scores = [(u, s) for u, s in scores if s is not None]
            per_cat: dict[str, list[float]] = defaultdict(list)
            for u, s in scores:
                c = _category(session, u, cats)
                if c:
                    per_cat[c].append(s)
            counts: dict[str, int] = defaultdict(int)
            for _, val in items:
                counts[str(val)] += 1
            rows.append(
                StudyRow(
                    level,
                    judge,
                    f"Agreement ({matrix.title})",
                    len(scores),
                    _mean([s for _, s in scores]),
                    {c: _mean(v) for c, v in per_cat.items()},
                    {str(k): counts.get(str(k), 0) / len(items) for k in matrix.scale.values},
                )
            )
    return rows


def _judge_vs_humans(matrix: RatingMatrix, judge: str, units: list[Unit]) -> tuple[int, float | None]:
    pairs = [(matrix.cells[(judge, u)], consensus(matrix, u)) for u in units if (judge, u) in matrix.cells]
    pairs = [(j, h) for j, h in pairs if h is not None]
    if not pairs:
        return 0, None
    if matrix.scale.level == "interval" and matrix.scale.numeric:
        est = stats.pearson([p[0] for p in pairs], [p[1] for p in pairs])
        return len(pairs), est.value
    return len(pairs), sum(1.0 for j, h in pairs if j == h) / len(pairs)


def comparison_rows(session: Session, scale_name: str, cats: dict[Unit, str | None]) -> list[StudyRow]:
    rows = []
    for matrix in collect(session, scale_name):
        kinds = sorted({u.kind for u in matrix.units if u.kind != "verdict"})
        judges = [r for r in matrix.raters if rater_kind(r) == JUDGE]
        if not judges or not any(rater_kind(r) == HUMAN for r in matrix.raters):
            continue
        metric = "Pearson" if matrix.scale.level == "interval" and matrix.scale.numeric else "Accuracy"
        for kind in kinds:
            units = [u for u in matrix.units if u.kind == kind]
            by_cat: dict[str, list[Unit]] = defaultdict(list)
            for u in units:
                c = _category(session, u, cats)
                if c:
                    by_cat[c].append(u)
            for judge in judges:
                size, avg = _judge_vs_humans(matrix, judge, units)
                if size == 0:
                    continue
                rows.append(
                    StudyRow(
                        LEVEL_NAMES.get(kind, kind),
                        f"{judge.split(':', 1)[1]} ({matrix.title})",
                        metric,
                        size,
                        avg,
                        {c: _judge_vs_humans(matrix, judge, us)[1] for c, us in by_cat.items()},
                    )
                )
    return rows


def build_study(session: Session) -> Study:
    cats: dict[Unit, str | None] = {}
    scales = session.exec(select(RatingScale).order_by(RatingScale.name)).all()
    endorsement, comparison, rankings = [], [], []
    for s in scales:
        endorsement += endorsement_rows(session, s.name, cats)
        comparison += comparison_rows(session, s.name, cats)
        for matrix in collect(session, s.name, include_judges=True):
            if sum(1 for r in matrix.raters if rater_kind(r) == JUDGE) < 2:
                continue
            ranking = model_ranking(session, matrix)
            if ranking.reason is None:
                rankings.append(ranking.to_dict())
    categories = sorted({c for c in cats.values() if c})
    return Study(categories, endorsement, comparison, rankings)


# ------------------------------------------------------------------------------------------------
# Rendering
# ------------------------------------------------------------------------------------------------


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v * 100:.2f}%" if pct else f"{v:.3f}"


def atp_table(study: Study) -> tuple[list[str], list[list[str]]]:
    values = sorted({k for r in study.endorsement for k in r.distribution})
    header = ["Judge", "Level", "Scale", "Rated", "Agreement rate"] + [f"share {v}" for v in values]
    body = [
        [r.task, r.level, r.metric, str(r.size), _fmt(r.avg, pct=True)]
        + [_fmt(r.distribution.get(v), pct=True) for v in values]
        for r in study.endorsement
    ]
    return header, body


def isg_table(study: Study) -> tuple[list[str], list[list[str]]]:
    header = ["Eval Level", "Eval Task", "Metric", "Size", "Avg."] + study.categories
    rows = sorted(
        study.comparison + study.endorsement,
        key=lambda r: (
            list(LEVEL_NAMES.values()).index(r.level) if r.level in LEVEL_NAMES.values() else 99,
            r.metric,
            r.task,
        ),
    )
    body = [
        [r.level, r.task, r.metric.split(" (")[0], str(r.size), _fmt(r.avg)]
        + [_fmt(r.by_category.get(c)) for c in study.categories]
        for r in rows
    ]
    return header, body


def _ranking_tables(study: Study) -> list[tuple[str, list[str], list[list[str]]]]:
    out = []
    for rk in study.rankings:
        judges = sorted(rk["spearman"])
        title = rk["scale"] + (f".{rk['dimension']}" if rk["dimension"] else "")
        body = [
            [a.split(":", 1)[1]] + ["–" if a == b else _fmt(rk["spearman"][a][b]["value"]) for b in judges]
            for a in judges
        ]
        out.append((title, [""] + [j.split(":", 1)[1] for j in judges], body))
    return out


def _md(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def render_markdown(study: Study, shape: str = "all") -> str:
    parts = []
    if shape in ("atp", "all"):
        parts.append("## Human agreement with judges' reports (ATP-Bench §6 shape)\n")
        parts.append("Agreement rate = mean rating rescaled to 0..1 (0-2 scale: mean / 2).\n")
        parts.append(_md(*atp_table(study)) if study.endorsement else "_No ratings of judges' reports yet._")
        for title, header, body in _ranking_tables(study):
            parts.append(f"\n### Inter-judge Spearman ρ of model rankings — {title} (ATP-Bench Table 8b shape)\n")
            parts.append(_md(header, body))
    if shape in ("isg", "all"):
        parts.append("\n## Judges against human annotations (ISG-Bench Table 3 shape)\n")
        parts.append(
            "Pearson / Accuracy: judge vs the humans' consensus on the same targets; "
            "Agreement: share of judges' reports people endorsed.\n"
        )
        header, body = isg_table(study)
        parts.append(_md(header, body) if body else "_No targets rated by both judges and people yet._")
    return "\n".join(parts).strip() + "\n"


def render_csv(study: Study, shape: str) -> str:
    if shape not in ("atp", "isg"):
        raise ValueError("a CSV holds one table: choose --shape atp or --shape isg")
    header, body = atp_table(study) if shape == "atp" else isg_table(study)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(body)
    return buf.getvalue()


__all__ = ["Study", "StudyRow", "build_study", "render_csv", "render_markdown"]
