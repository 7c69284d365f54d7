"""The numbers behind the estimates panel, computed in a worker exactly as ``chainmark estimate`` and
``chainmark review plan --dry-run`` compute them (same functions, same defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select

from evaluation.agreement.estimates import EstimateError, estimate_report, judged_items, rated_judges
from evaluation.agreement.planner import plan_for
from store.models import Run
from tui.blind_view import scope_for

NEXT_ITEMS = 10  # how many of the planner's next items the panel lists


@dataclass(frozen=True)
class EstimatesQuery:
    run_id: int | None = None  # None: the newest run
    judge: str = ""  # "": the first judge people rated alongside on that run
    scale: str = ""


@dataclass(frozen=True)
class EstimatesData:
    query: EstimatesQuery
    run_id: int | None
    judge: str
    scale: str
    choices: list[tuple[str, str]] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    message: str | None = None


def _newest_run(session: Session) -> int | None:
    return session.exec(select(Run.id).order_by(Run.id.desc())).first()  # type: ignore[union-attr]


def estimates_data(session: Session, query: EstimatesQuery, viewer: str | None) -> EstimatesData:
    """The three intervals (overall and per category) and the planner's next items for the query."""
    scope = scope_for(session, viewer)
    if scope.active:
        return EstimatesData(
            query, None, "", "", message=f"{viewer} still has {len(scope.targets)} target(s) to rate blind"
        )
    run_id = query.run_id if query.run_id is not None else _newest_run(session)
    if run_id is None:
        return EstimatesData(query, None, "", "", message="no runs yet")
    choices = rated_judges(session, run_id)
    judge, scale = query.judge, query.scale
    fitting = [c for c in choices if not scale or c[1] == scale]
    if not judge and fitting:
        judge, scale = fitting[0]
    if not judge:
        return EstimatesData(
            query,
            run_id,
            "",
            scale,
            choices,
            message=f"no judge on run {run_id} has human ratings beside it; enter one",
        )
    try:
        items = judged_items(session, run_id, judge, scale=scale or None)
    except EstimateError as exc:
        return EstimatesData(query, run_id, judge, scale, choices, message=str(exc))
    reports = [estimate_report(d, by_category=True).to_dict() for d in items]
    plan = plan_for(session, items[0], NEXT_ITEMS).to_dict()
    return EstimatesData(query, run_id, judge, items[0].scale.name, choices, reports, plan)
