"""Rater × unit matrices read straight from the store: HumanRating rows and judges' Verdict rows.

Raters are named ``human:<annotator>`` and ``judge:<judge>``. A unit is a rated target
``(kind, id, part)``; a scale with dimensions (ISG's 1-10 per dimension) gives one matrix per
dimension. Each person's newest rating per target counts; ratings made on an older revision of
their task are stale and left out unless asked for.

Which verdicts belong to a scale: those of judges whose ``params["scale"]`` names it, verdicts whose
``parsed["scale"]`` names it, and all verdicts of judges the caller names explicitly. A verdict is
read onto the scale from ``parsed[dimension]`` for dimensional scales, ``score`` for numeric scales
and ``label`` for label scales (case/punctuation-insensitive); unreadable ones are skipped and
counted in ``notes``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select, col

from store.models import Adjudication, Annotator, HumanRating, Judge, RatingScale, Task, Verdict

HUMAN, JUDGE = "human", "judge"
_TRUE = {"true", "1", "yes", "y", "pass", "passed", "correct"}
_FALSE = {"false", "0", "no", "n", "fail", "failed", "incorrect"}


def slug(value: Any) -> str:
    return re.sub(r"[^0-9a-z]+", "", str(value).lower())


@dataclass(frozen=True)
class ScaleInfo:
    name: str
    level: str
    values: list[Any]
    dimensions: list[str] = field(default_factory=list)

    @property
    def numeric(self) -> bool:
        return bool(self.values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values)

    @property
    def span(self) -> float:
        return float(max(self.values) - min(self.values)) if self.numeric else 1.0

    def rank(self, value: Any) -> int:
        return self.values.index(value)

    def distance(self, a: Any, b: Any) -> float:
        """0..1: 0/1 for nominal, rank gap / (k-1) for ordinal, |a-b| / span for interval."""
        if self.level == "interval" and self.numeric:
            return abs(float(a) - float(b)) / self.span if self.span else float(a != b)
        if self.level == "ordinal" and a in self.values and b in self.values and len(self.values) > 1:
            return abs(self.rank(a) - self.rank(b)) / (len(self.values) - 1)
        return float(a != b)

    def read(self, raw: Any) -> Any:
        """A raw judge output (label or number) as a value on this scale, or None."""
        if raw is None or isinstance(raw, (dict, list)):
            return None
        if self.numeric:
            try:
                number = float(raw)
            except (TypeError, ValueError):
                return None
            if self.level == "interval":
                if min(self.values) <= number <= max(self.values):
                    return int(number) if number.is_integer() else number
                return None
            return next((v for v in self.values if float(v) == number), None)
        key = slug(raw)
        for v in self.values:
            if slug(v) == key:
                return v
        if len(self.values) == 2:
            if key in _TRUE or raw is True:
                return self.values[0]
            if key in _FALSE or raw is False:
                return self.values[1]
        return None


@dataclass(frozen=True, order=True)
class Unit:
    kind: str
    id: int
    part: str = ""

    def label(self) -> str:
        return f"{self.kind}:{self.id}" + (f"[{self.part}]" if self.part else "")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "part": self.part}


def rater_kind(rater: str) -> str:
    return rater.split(":", 1)[0]


def pair_kind(a: str, b: str) -> str:
    return "-".join(sorted((rater_kind(a), rater_kind(b)), key=lambda k: (k != HUMAN, k)))


@dataclass
class RatingMatrix:
    scale: ScaleInfo
    dimension: str
    raters: list[str]
    units: list[Unit]
    cells: dict[tuple[str, Unit], Any]
    sources: dict[tuple[str, Unit], tuple[str, int]]
    stale_excluded: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.scale.name + (f".{self.dimension}" if self.dimension else "")

    def rows(self, raters: list[str] | None = None) -> list[list[Any]]:
        return [[self.cells.get((r, u)) for u in self.units] for r in (raters or self.raters)]

    def ranked_rows(self, raters: list[str] | None = None) -> list[list[Any]]:
        """Rows as numbers for ordinal/interval statistics (ordinal: rank in scale order)."""

        def code(v: Any) -> Any:
            if v is None:
                return None
            if self.scale.level == "ordinal" and v in self.scale.values:
                return self.scale.rank(v)
            return float(v) if self.scale.numeric else None

        return [[code(v) for v in row] for row in self.rows(raters)]

    def values_of(self, unit: Unit, kind: str | None = None) -> dict[str, Any]:
        return {
            r: self.cells[(r, unit)]
            for r in self.raters
            if (r, unit) in self.cells and (kind is None or rater_kind(r) == kind)
        }

    def restrict(self, units: list[Unit]) -> RatingMatrix:
        keep = set(units)
        return RatingMatrix(
            self.scale,
            self.dimension,
            self.raters,
            [u for u in self.units if u in keep],
            {k: v for k, v in self.cells.items() if k[1] in keep},
            {k: v for k, v in self.sources.items() if k[1] in keep},
            self.stale_excluded,
            list(self.notes),
        )


def scale_info(session: Session, name: str) -> ScaleInfo:
    row = session.exec(select(RatingScale).where(RatingScale.name == name)).first()
    if row is None:
        known = ", ".join(session.exec(select(RatingScale.name).order_by(RatingScale.name)).all()) or "none"
        raise LookupError(f"no rating scale named {name!r} (known: {known})")
    return ScaleInfo(row.name, row.level, list(row.values or []), list(row.dimensions or []))


def _resolve_raters(session: Session, names: list[str] | None) -> tuple[set[str] | None, set[str]]:
    """Rater keys asked for, and the judge names named explicitly."""
    if not names:
        return None, set()
    humans = set(session.exec(select(Annotator.name)).all())
    judges = set(session.exec(select(Judge.name)).all())
    keys, explicit = set(), set()
    for raw in names:
        raw = raw.strip()
        if not raw:
            continue
        kind, _, name = raw.partition(":")
        if name and kind in (HUMAN, JUDGE):
            pool = humans if kind == HUMAN else judges
            if name not in pool:
                raise LookupError(f"no {'annotator' if kind == HUMAN else 'judge'} named {name!r}")
        elif raw in humans and raw in judges:
            raise LookupError(f"{raw!r} is both an annotator and a judge; write human:{raw} or judge:{raw}")
        elif raw in humans:
            kind, name = HUMAN, raw
        elif raw in judges:
            kind, name = JUDGE, raw
        else:
            raise LookupError(f"no annotator or judge named {raw!r}")
        keys.add(f"{kind}:{name}")
        if kind == JUDGE:
            explicit.add(name)
    return keys, explicit


def _dimension_value(value: Any, dimension: str) -> Any:
    if not dimension:
        return value
    if isinstance(value, dict):
        return value.get(dimension)
    return None


def verdict_raw(verdict: Verdict, scale: ScaleInfo, dimension: str) -> Any:
    """The part of a verdict to read on the scale (see the module docstring)."""
    parsed = verdict.parsed if isinstance(verdict.parsed, dict) else {}
    if dimension:
        raw = parsed.get(dimension)
        if raw is None and dimension == "overall":
            raw = parsed.get("overall_score", verdict.score)
        if isinstance(raw, dict):
            raw = raw.get("score")
        return raw
    if scale.numeric:
        if verdict.score is not None:
            return verdict.score
        return parsed.get("score", verdict.label)
    return verdict.label if verdict.label is not None else parsed.get("label")


def collect(
    session: Session,
    scale: str,
    *,
    dimension: str | None = None,
    target_kind: str | None = None,
    raters: list[str] | None = None,
    include_stale: bool = False,
    include_judges: bool = True,
) -> list[RatingMatrix]:
    """One matrix per dimension of the scale (one for a plain scale)."""
    info = scale_info(session, scale)
    if dimension and dimension not in info.dimensions:
        raise LookupError(f"scale {scale} has no dimension {dimension!r} ({', '.join(info.dimensions) or 'none'})")
    dims = [dimension] if dimension else (info.dimensions or [""])
    wanted, explicit = _resolve_raters(session, raters)

    stmt = (
        select(HumanRating, Annotator.name)
        .join(Annotator, col(Annotator.id) == col(HumanRating.annotator_id))
        .where(HumanRating.scale == info.name)
    )
    if target_kind:
        stmt = stmt.where(HumanRating.target_kind == target_kind)
    latest: dict[tuple[str, Unit], HumanRating] = {}
    for r, name in session.exec(stmt.order_by(HumanRating.id)).all():  # type: ignore[arg-type]
        latest[(f"{HUMAN}:{name}", Unit(r.target_kind, r.target_id, r.target_part))] = r
    task_ids = {r.task_id for r in latest.values() if r.task_id is not None}
    revisions = (
        dict(session.exec(select(Task.id, Task.revision).where(Task.id.in_(task_ids))).all()) if task_ids else {}  # type: ignore[union-attr]
    )

    verdicts: dict[tuple[str, Unit], Verdict] = {}
    if include_judges:
        vstmt = select(Verdict, Judge).join(Judge, Judge.id == Verdict.judge_id)  # type: ignore[arg-type]
        if target_kind:
            vstmt = vstmt.where(Verdict.target_kind == target_kind)
        for v, j in session.exec(vstmt.order_by(col(Verdict.id))).all():
            declared = (j.params or {}).get("scale")
            parsed_scale = v.parsed.get("scale") if isinstance(v.parsed, dict) else None
            if declared == info.name or parsed_scale == info.name or j.name in explicit:
                verdicts[(f"{JUDGE}:{j.name}", Unit(v.target_kind, v.target_id, v.target_part))] = v

    out = []
    for dim in dims:
        cells: dict[tuple[str, Unit], Any] = {}
        sources: dict[tuple[str, Unit], tuple[str, int]] = {}
        stale = unreadable = 0
        for key, r in latest.items():
            if wanted is not None and key[0] not in wanted:
                continue
            value = _dimension_value(r.value, dim)
            if value is None:
                continue
            current_rev = revisions.get(r.task_id) if r.task_id is not None else None
            if (
                not include_stale
                and r.task_revision is not None
                and current_rev is not None
                and r.task_revision < current_rev
            ):
                stale += 1
                continue
            cells[key] = value
            sources[key] = ("rating", r.id or 0)
        for key, v in verdicts.items():
            if wanted is not None and key[0] not in wanted:
                continue
            value = info.read(verdict_raw(v, info, dim))
            if value is None:
                unreadable += 1
                continue
            cells[key] = value
            sources[key] = ("verdict", v.id or 0)
        notes = []
        if stale:
            notes.append(f"{stale} stale rating(s) left out (their task was edited after rating)")
        if unreadable:
            notes.append(
                f"{unreadable} verdict(s) could not be read on scale {info.name}"
                + (f" (dimension {dim})" if dim else "")
            )
        rater_keys = sorted({k[0] for k in cells}, key=lambda k: (rater_kind(k) != HUMAN, k))
        units = sorted({k[1] for k in cells})
        out.append(RatingMatrix(info, dim, rater_keys, units, cells, sources, stale, notes))
    return out


def adjudicated(session: Session, scale: str, dimension: str = "") -> dict[Unit, Any]:
    """The newest adjudicated value per unit on a scale (dimension picked out of dict values)."""
    out: dict[Unit, Any] = {}
    for a in session.exec(select(Adjudication).where(Adjudication.scale == scale).order_by(col(Adjudication.id))).all():
        value = _dimension_value(a.final_value, dimension)
        if value is not None:
            out[Unit(a.target_kind, a.target_id, a.target_part)] = value
    return out


def consensus(matrix: RatingMatrix, unit: Unit, kind: str = HUMAN) -> Any:
    """Humans' consensus on a unit: the mean on interval scales, else the unique most common value."""
    values = list(matrix.values_of(unit, kind).values())
    if not values:
        return None
    if matrix.scale.level == "interval" and matrix.scale.numeric:
        return sum(float(v) for v in values) / len(values)
    top = Counter(values).most_common()
    if len(top) > 1 and top[0][1] == top[1][1]:
        return None
    return top[0][0]


def reference_values(session: Session, matrix: RatingMatrix) -> tuple[dict[Unit, Any], str]:
    """Reference per unit for judge errors: adjudicated values first, else the humans' consensus."""
    ref: dict[Unit, Any] = {}
    adj = adjudicated(session, matrix.scale.name, matrix.dimension)
    used_adj = used_consensus = 0
    for u in matrix.units:
        if u in adj:
            ref[u] = adj[u]
            used_adj += 1
        else:
            c = consensus(matrix, u)
            if c is not None:
                ref[u] = c
                used_consensus += 1
    return ref, f"{used_adj} adjudicated, {used_consensus} human consensus"


def verdict_values(session: Session, scale: str, unit: Unit) -> dict[int, Any]:
    """Each verdict on ``unit`` read onto ``scale``, by verdict id (a dict per dimension for
    dimensional scales): what an adjudication records as the judges' values it overrides or confirms."""
    out: dict[int, Any] = {}
    for m in collect(session, scale, target_kind=unit.kind, include_stale=True):
        for (rater, u), (table_name, ident) in m.sources.items():
            if u != unit or table_name != "verdict":
                continue
            if m.dimension:
                out.setdefault(ident, {})[m.dimension] = m.cells[(rater, u)]
            else:
                out[ident] = m.cells[(rater, u)]
    return out
