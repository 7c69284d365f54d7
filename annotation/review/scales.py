"""Rating scales as data: level of measurement, allowed values (in order), dimensions, rubric.

Built-in scales cover the seed benchmarks' human studies; they are written to the ``ratingscale``
table the first time anything review-related is written, so the statistics side (which reads rows,
not this module) sees the same definitions. Custom scales are added the same way.

For two-valued label scales the first value is the positive one (``yes``, ``pass``), which is what
``true``/``1`` map to when importing existing labels.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, select

from annotation.review.errors import ReviewError
from store.models import RatingScale
from annotation.vocab import SCALE_LEVELS

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

LEVELS = SCALE_LEVELS

ISG_DIMENSIONS = (
    "coherence",
    "content_accuracy",
    "relevance_and_responsiveness",
    "visual_textual_alignment",
    "creativity_and_originality",
    "overall",
)
MME_FAILURE_MODES = (
    "Missing search tools",
    "Bad search query",
    "Unfaithful visual tool use",
    "Missing visual tool use",
    "Overthinking Collapse",
    "Tool-Misexecution",
    "PostVisual-Perception-Deficit",
)


@dataclass(frozen=True)
class Scale:
    """A plain copy of a scale row (or a built-in not stored yet)."""

    name: str
    level: str
    values: list[Any]
    dimensions: list[str] = field(default_factory=list)
    rubric: str | None = None

    @property
    def numeric(self) -> bool:
        return bool(self.values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "level": self.level,
            "values": self.values,
            "dimensions": self.dimensions,
            "rubric": self.rubric,
        }


BUILTIN_SCALES: tuple[Scale, ...] = (
    Scale(
        "yes-no",
        "nominal",
        ["yes", "no"],
        [],
        "Is the target acceptable / correct? (ISG holistic human agreement: 'Do you satisfy with the output?')",
    ),
    Scale(
        "atp-agreement",
        "ordinal",
        [0, 1, 2],
        [],
        "How far do you agree with the judge's report? 0 = disagree, 1 = partly agree, 2 = fully agree "
        "(ATP-Bench §6 human agreement study). Rate a verdict target.",
    ),
    Scale(
        "isg-1-10",
        "interval",
        list(range(1, 11)),
        list(ISG_DIMENSIONS),
        "ISG holistic human scoring: 1-10 for each of coherence, content accuracy, relevance and "
        "responsiveness, visual-textual alignment, creativity and originality, and an overall score.",
    ),
    Scale(
        "pass-fail",
        "nominal",
        ["pass", "fail"],
        [],
        "Did the trajectory pass this checkpoint? Rate a checkpoint_result target.",
    ),
    Scale(
        "mme-failure-mode",
        "nominal",
        list(MME_FAILURE_MODES),
        [],
        "Agentic-MME App. E: the dominant failure mode of a failed trajectory — the earliest or most "
        "consequential bottleneck.",
    ),
)
BUILTIN_BY_NAME = {s.name: s for s in BUILTIN_SCALES}

_TRUE = {"true", "t", "1", "y", "yes", "pass", "passed", "ok"}
_FALSE = {"false", "f", "0", "n", "no", "fail", "failed"}


def slug(value: Any) -> str:
    """Case- and punctuation-insensitive form of a label: 'Tool-Misexecution' == 'tool misexecution'."""
    return re.sub(r"[^0-9a-z]+", "", str(value).lower())


def _from_row(row: RatingScale) -> Scale:
    return Scale(row.name, row.level, list(row.values or []), list(row.dimensions or []), row.rubric)


def ensure_builtin_scales(session: Session) -> None:
    """Write the built-in scales that are not stored yet (existing rows are left as they are)."""
    stored = set(session.exec(select(RatingScale.name)).all())
    for spec in BUILTIN_SCALES:
        if spec.name not in stored:
            session.add(
                RatingScale(
                    name=spec.name,
                    level=spec.level,
                    values=list(spec.values),
                    dimensions=list(spec.dimensions),
                    rubric=spec.rubric,
                )
            )
    session.flush()


def store_builtin_scales_before_reading(engine: Engine, actor: str | None = None) -> None:
    """Before agreement or estimates are read: store the built-in scales not stored yet, so judges'
    verdicts on them are read too. Nothing is written when all are stored, the write does not wait
    for another writer's lock, and a database that takes no writes (read-only, full, locked) is read
    as it is: a built-in scale no one stored holds no one's ratings."""
    from store import read_only
    from store.db import optional_write_scope
    from store.storable import write_failure

    with Session(read_only(engine)) as s:
        if set(BUILTIN_BY_NAME) <= set(s.exec(select(RatingScale.name)).all()):
            return
    try:
        with optional_write_scope(engine, actor) as s:
            ensure_builtin_scales(s)
    except Exception as exc:
        if not write_failure(exc):
            raise


def list_scales(session: Session) -> list[Scale]:
    """Stored scales plus built-ins not stored yet, by name."""
    found = {r.name: _from_row(r) for r in session.exec(select(RatingScale)).all()}
    for spec in BUILTIN_SCALES:
        found.setdefault(spec.name, spec)
    return [found[k] for k in sorted(found)]


def get_scale(session: Session, name: str) -> Scale:
    row = session.exec(select(RatingScale).where(RatingScale.name == name)).first()
    if row is not None:
        return _from_row(row)
    if name in BUILTIN_BY_NAME:
        return BUILTIN_BY_NAME[name]
    known = ", ".join(s.name for s in list_scales(session))
    raise ReviewError(f"no rating scale named {name!r} (known: {known})")


def parse_values(text: str) -> list[Any]:
    """CLI form of a value list: 'a,b,c', '0..100' (integers) or a JSON array."""
    text = text.strip()
    if text.startswith("["):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReviewError(f"--values is not a valid JSON array: {exc}") from exc
        if not isinstance(values, list):
            raise ReviewError("--values must be a JSON array")
        return values
    m = re.fullmatch(r"(-?\d+)\s*\.\.\s*(-?\d+)", text)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi <= lo:
            raise ReviewError(f"--values range {text!r} must go up (e.g. 1..10)")
        return list(range(lo, hi + 1))
    return [_number_or_text(v.strip()) for v in text.split(",") if v.strip()]


def _number_or_text(text: str) -> Any:
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() else number


def add_scale(
    session: Session,
    name: str,
    level: str,
    values: list[Any],
    dimensions: list[str] | None = None,
    rubric: str | None = None,
) -> Scale:
    """Add a custom scale. Values are listed in scale order (this order defines ordinal ranks)."""
    name = (name or "").strip()
    if not name:
        raise ReviewError("a scale needs a name")
    if name in BUILTIN_BY_NAME:
        raise ReviewError(f"{name!r} is a built-in scale; choose another name")
    if session.exec(select(RatingScale).where(RatingScale.name == name)).first() is not None:
        raise ReviewError(f"a scale named {name!r} exists already")
    if level not in LEVELS:
        raise ReviewError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    if len(values) < 2:
        raise ReviewError("a scale needs at least two values")
    if len({json.dumps(v) for v in values}) != len(values):
        raise ReviewError("scale values must be distinct")
    spec = Scale(name, level, list(values), list(dimensions or []), rubric)
    if level == "interval" and not spec.numeric:
        raise ReviewError("an interval scale needs numeric values")
    session.add(RatingScale(name=name, level=level, values=spec.values, dimensions=spec.dimensions, rubric=rubric))
    session.flush()
    return spec


def _scalar(scale: Scale, raw: Any, where: str) -> Any:
    if isinstance(raw, str):
        raw = raw.strip()
    if raw is None or raw == "":
        raise ReviewError(f"{where}: a value is required (scale {scale.name}: {_describe(scale)})")
    if scale.numeric:
        try:
            number = float(raw) if not isinstance(raw, bool) else float("nan")
        except (TypeError, ValueError):
            raise ReviewError(f"{where}: {raw!r} is not a number (scale {scale.name}: {_describe(scale)})") from None
        if scale.level == "interval":
            if not min(scale.values) <= number <= max(scale.values):
                raise ReviewError(f"{where}: {raw!r} is outside scale {scale.name} ({_describe(scale)})")
            return int(number) if number.is_integer() else number
        for v in scale.values:
            if float(v) == number:
                return v
        raise ReviewError(f"{where}: {raw!r} is not on scale {scale.name} ({_describe(scale)})")
    key = slug(raw)
    for v in scale.values:
        if slug(v) == key:
            return v
    if len(scale.values) == 2 and all(isinstance(v, str) for v in scale.values):
        if key in _TRUE or raw is True:
            return scale.values[0]
        if key in _FALSE or raw is False:
            return scale.values[1]
    raise ReviewError(f"{where}: {raw!r} is not on scale {scale.name} ({_describe(scale)})")


def _describe(scale: Scale) -> str:
    if scale.numeric and len(scale.values) > 6:
        text = f"{min(scale.values)}..{max(scale.values)}"
    else:
        text = " | ".join(map(str, scale.values))
    if scale.dimensions:
        text += f" for each of {', '.join(scale.dimensions)}"
    return text


def normalize_value(scale: Scale, raw: Any, where: str = "value") -> Any:
    """The stored form of a rating: a value on the scale, or for dimensional scales a dict of them.

    Dimensional values may come as a dict, a JSON object string, or 'dim=v,dim=v'; a subset of the
    dimensions is allowed (the rest count as not rated).
    """
    if not scale.dimensions:
        if isinstance(raw, (dict, list)):
            raise ReviewError(f"{where}: scale {scale.name} takes one value, got {json.dumps(raw)}")
        return _scalar(scale, raw, where)
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("{"):
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ReviewError(f"{where}: not a valid JSON object: {exc}") from exc
        else:
            raw = {}
            for part in filter(None, (p.strip() for p in text.split(","))):
                if "=" not in part:
                    raise ReviewError(
                        f"{where}: scale {scale.name} has dimensions; write "
                        f"'dimension=value,…' or a JSON object (got {part!r})"
                    )
                k, v = part.split("=", 1)
                raw[k.strip()] = v
    if not isinstance(raw, dict) or not raw:
        raise ReviewError(f"{where}: scale {scale.name} needs a value for one or more of {', '.join(scale.dimensions)}")
    out: dict[str, Any] = {}
    for key, v in raw.items():
        dim = next((d for d in scale.dimensions if slug(d) == slug(key)), None)
        if dim is None:
            raise ReviewError(f"{where}: {key!r} is not a dimension of {scale.name} ({', '.join(scale.dimensions)})")
        out[dim] = _scalar(scale, v, f"{where}.{dim}")
    return {d: out[d] for d in scale.dimensions if d in out}
