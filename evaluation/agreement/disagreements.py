"""The disagreement queue: units where raters split by more than a threshold.

The split between two raters is the scale distance of their values, in 0..1 (nominal: 0 or 1;
ordinal: rank gap / (k-1); interval: |a-b| / span). A unit is queued when some pair of its raters
is split by more than ``threshold`` (default 0: any disagreement), and the queue item says which
kinds of pairs split (human-human, human-judge, judge-judge). Adjudicated units leave the queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

from sqlmodel import Session

from evaluation.agreement.matrix import RatingMatrix, Unit, adjudicated, pair_kind
from evaluation import vocab

PAIR_KINDS = vocab.PAIR_KINDS


@dataclass(frozen=True)
class Disagreement:
    unit: Unit
    scale: str
    dimension: str
    split: float
    pair_kinds: list[str]
    values: dict[str, Any]
    sources: dict[str, list[Any]]
    adjudicated: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.unit.to_dict(),
            "scale": self.scale,
            "dimension": self.dimension,
            "split": round(self.split, 6),
            "pair_kinds": self.pair_kinds,
            "values": self.values,
            "sources": self.sources,
            "adjudicated": self.adjudicated,
        }


def disagreements(
    session: Session,
    matrix: RatingMatrix,
    *,
    threshold: float = 0.0,
    between: list[str] | None = None,
    include_adjudicated: bool = False,
) -> list[Disagreement]:
    if not 0.0 <= threshold < 1.0:
        raise ValueError(f"--threshold must be in [0, 1) (a share of the scale's range); got {threshold}")
    for b in between or []:
        if b not in PAIR_KINDS:
            raise ValueError(f"--between must be one of {', '.join(PAIR_KINDS)}; got {b!r}")
    done = adjudicated(session, matrix.scale.name, matrix.dimension)
    out = []
    for unit in matrix.units:
        values = matrix.values_of(unit)
        if len(values) < 2:
            continue
        if unit in done and not include_adjudicated:
            continue
        split, kinds = 0.0, set()
        for a, b in combinations(values, 2):
            kind = pair_kind(a, b)
            if between and kind not in between:
                continue
            d = matrix.scale.distance(values[a], values[b])
            split = max(split, d)
            if d > threshold:
                kinds.add(kind)
        if not kinds:
            continue
        out.append(
            Disagreement(
                unit,
                matrix.scale.name,
                matrix.dimension,
                split,
                [k for k in PAIR_KINDS if k in kinds],
                values,
                {r: list(matrix.sources[(r, unit)]) for r in values},
                done.get(unit),
            )
        )
    out.sort(key=lambda d: (-d.split, d.unit))
    return out
