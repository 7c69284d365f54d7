"""Compare runs task by task: where do models differ?

``compare`` is a pure function from each run's per-task results to table rows and a summary (per-run
mean, pairwise wins/ties/losses, how many tasks differ). ``load_run_results`` builds those results
from the store through the benchmark profile's own per-item scoring (``item_score`` on the profile),
so the per-task score is the one ``chainmark score`` counts, in the same mode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable

from evaluation.scoring.results import ScoreResult

from sqlalchemy.engine import Engine

from evaluation.scoring.loader import load_run
from evaluation.scoring.runner import profile_for, score_loaded
from store import read_only, session_scope
from evaluation import vocab

RIGHT_AT = 0.5
"""A task counts as right for a run when its per-item score (in [0, 1]) is at least this."""

FILTERS = vocab.COMPARE_FILTERS
SORTS = vocab.COMPARE_SORTS


@dataclass
class TaskResult:
    """One run's outcome on one task."""

    task_id: int
    trajectory_id: int | None
    status: str
    answer: str
    score: float | None
    query: str = ""
    source_id: str | None = None
    hidden: bool = False  # blind mode: the score is withheld from this viewer

    @property
    def right(self) -> bool:
        return self.score is not None and self.score >= RIGHT_AT


@dataclass
class RunResults:
    run_id: int
    label: str
    benchmark: str
    mode: str
    tasks: dict[int, TaskResult] = field(default_factory=dict)
    hidden: str = ""  # blind mode: why this run's model and scores are withheld ("" when shown)


def withhold(run: RunResults, reason: str) -> RunResults:
    """The run as a blind viewer may see it: no model in the label and no per-task score (status and
    answers stay: they are what the viewer judges); ``reason`` says why, in one line."""
    tasks = {k: replace(t, score=None, hidden=True) for k, t in run.tasks.items()}
    return replace(run, label=f"run {run.run_id}", tasks=tasks, hidden=reason)


@dataclass
class Row:
    task_id: int
    query: str
    source_id: str | None
    cells: list[TaskResult]
    spread: float
    differ: bool


@dataclass
class Comparison:
    runs: list[dict[str, Any]]
    rows: list[Row]
    summary: dict[str, Any]
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "summary": self.summary,
            "notes": self.notes,
            "rows": [
                {
                    "task_id": r.task_id,
                    "source_id": r.source_id,
                    "query": r.query,
                    "spread": r.spread,
                    "differ": r.differ,
                    "cells": [
                        {k: v for k, v in asdict(c).items() if k not in ("query", "source_id")}
                        | {"right": None if c.hidden else c.right}
                        for c in r.cells
                    ],
                }
                for r in self.rows
            ],
        }


def _spread(cells: list[TaskResult]) -> float:
    scores = [c.score if c.score is not None else 0.0 for c in cells if not c.hidden]
    return max(scores) - min(scores) if scores else 0.0


def _keep(row: Row, wanted: str | None) -> bool:
    if not wanted:
        return True
    rights = [c.right for c in row.cells]
    if wanted == "any-differ":
        return row.differ
    if wanted == "a-right-b-wrong":
        return rights[0] and not rights[1]
    if wanted == "b-right-a-wrong":
        return rights[1] and not rights[0]
    if wanted == "all-wrong":
        return not any(rights)
    if wanted == "all-right":
        return all(rights)
    raise ValueError(f"unknown filter {wanted!r}; choose one of {', '.join(FILTERS)}")


def pairwise(runs: list[RunResults], shared: list[int]) -> list[dict[str, Any]]:
    """For every ordered pair (A before B in the given order): tasks A scored higher, equal, lower."""
    out = []
    shown = [r for r in runs if not r.hidden]  # a withheld run has no scores to win or lose on
    for i, a in enumerate(shown):
        for b in shown[i + 1 :]:
            w = t = lo = 0
            for task in shared:
                sa, sb = a.tasks[task].score or 0.0, b.tasks[task].score or 0.0
                if sa > sb:
                    w += 1
                elif sa < sb:
                    lo += 1
                else:
                    t += 1
            out.append({"a": a.run_id, "b": b.run_id, "wins": w, "ties": t, "losses": lo})
    return out


def compare(
    runs: list[RunResults], *, sort: str = "disagreement", filter: str | None = None, limit: int | None = None
) -> Comparison:
    """Rows for the tasks every run has; summary numbers are over all shared tasks, before filter/limit."""
    if len(runs) < 2:
        raise ValueError("compare needs at least two runs")
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; choose one of {', '.join(SORTS)}")
    if filter and filter not in FILTERS:
        raise ValueError(f"unknown filter {filter!r}; choose one of {', '.join(FILTERS)}")
    if filter in ("a-right-b-wrong", "b-right-a-wrong") and len(runs) != 2:
        raise ValueError(f"--filter {filter} needs exactly two runs (A and B)")
    shared = sorted(set.intersection(*(set(r.tasks) for r in runs)))
    notes = []
    for r in runs:
        only = len(r.tasks) - len(shared)
        if only:
            notes.append(
                f"run {r.run_id} has {only} task(s) not in every run; compared on the {len(shared)} shared task(s) only"
            )
    benchmarks = sorted({r.benchmark for r in runs})
    if len(benchmarks) > 1:
        notes.append(f"runs are over different benchmarks ({', '.join(benchmarks)}); compared on shared tasks")
    modes = sorted({r.mode for r in runs})
    rows = []
    for task in shared:
        cells = [r.tasks[task] for r in runs]
        first = cells[0]
        differ = len({(c.right, c.score) for c in cells if not c.hidden}) > 1
        rows.append(
            Row(
                task_id=task,
                query=first.query,
                source_id=first.source_id,
                cells=cells,
                spread=_spread(cells),
                differ=differ,
            )
        )
    summary = {
        "shared_tasks": len(shared),
        "differing": sum(r.differ for r in rows),
        "scoring_mode": modes[0] if len(modes) == 1 else modes,
        "mean": {r.run_id: None if r.hidden else _mean([r.tasks[t].score or 0.0 for t in shared]) for r in runs},
        "right": {r.run_id: None if r.hidden else sum(r.tasks[t].right for t in shared) for r in runs},
        "pairwise": pairwise(runs, shared),
    }
    if sort == "disagreement":
        rows.sort(key=lambda r: (-r.spread, not r.differ, r.task_id))
    rows = [r for r in rows if _keep(r, filter)]
    if limit is not None:
        rows = rows[: max(limit, 0)]
    notes.extend(dict.fromkeys(r.hidden for r in runs if r.hidden))
    info = [
        {"run_id": r.run_id, "label": r.label, "benchmark": r.benchmark, "mode": r.mode, "hidden": r.hidden or None}
        for r in runs
    ]
    return Comparison(runs=info, rows=rows, summary=summary, notes=notes)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# ------------------------------------------------------------------ from the store


def run_results(loaded: Any, scored: ScoreResult, profile: Any) -> RunResults:
    """One run's TaskResults from its loaded items and its score result's ``per_item`` rows."""
    item_score = getattr(profile, "item_score", None)
    by_traj = {row.get("trajectory_id"): row for row in scored.per_item}
    out = RunResults(
        run_id=loaded.run["id"],
        label=f"{loaded.model or '?'} (run {loaded.run['id']})",
        benchmark=loaded.benchmark.get("name") or "",
        mode=scored.mode,
    )
    for it in loaded.items:  # trajectories in id order: a task run twice keeps its latest trajectory
        traj_id = it.trajectory.get("id")
        row = by_traj.get(traj_id)
        score = item_score(row) if (row is not None and item_score is not None) else None
        task_id = int(it.task.get("id") or 0)
        out.tasks[task_id] = TaskResult(
            task_id=task_id,
            trajectory_id=traj_id,
            status=str(it.trajectory.get("status") or ""),
            answer=it.final_answer(),
            score=score,
            query=str(it.task.get("query") or ""),
            source_id=it.task.get("source_id"),
        )
    return out


def results_in(
    session: Any, run_ids: Iterable[int], *, mode: str = "faithful", embedder: str = "minilm"
) -> list[RunResults]:
    """Score each run in ``session`` (nothing written) and keep its per-task results."""
    out = []
    for run_id in run_ids:
        loaded = load_run(session, run_id)
        scored = score_loaded(session, loaded, mode=mode, embedder=embedder)
        out.append(run_results(loaded, scored, profile_for(loaded)))
    return out


def load_run_results(
    engine: Engine, run_ids: Iterable[int], *, mode: str = "faithful", embedder: str = "minilm"
) -> list[RunResults]:
    with session_scope(read_only(engine)) as s:
        return results_in(s, run_ids, mode=mode, embedder=embedder)


def compare_runs(
    engine: Engine, run_ids: list[int], *, mode: str = "faithful", embedder: str = "minilm", **options: Any
) -> Comparison:
    return compare(load_run_results(engine, run_ids, mode=mode, embedder=embedder), **options)


def comparison_tables(
    engine: Engine, runs: list[tuple[int, str]], *, mode: str = "faithful", embedder: str = "minilm", top: int = 10
) -> list[tuple[str, list[str], list[list[Any]]]]:
    """A report's run comparison for ``runs`` ((run id, benchmark) pairs): one per benchmark that two or
    more of them are over. Runs over different benchmarks share no task, so they are never compared."""
    by_benchmark: dict[str, list[int]] = {}
    for run_id, benchmark in runs:
        ids = by_benchmark.setdefault(benchmark, [])
        if run_id not in ids:
            ids.append(run_id)
    out: list[tuple[str, list[str], list[list[Any]]]] = []
    for benchmark, ids in by_benchmark.items():
        if len(ids) < 2:
            continue
        found = report_tables(compare_runs(engine, ids, mode=mode, embedder=embedder), top)
        if len(by_benchmark) > 1:
            found = [(f"{benchmark}: {title}", headers, rows) for title, headers, rows in found]
        out += found
    return out


def report_tables(cmp: Comparison, top: int = 10) -> list[tuple[str, list[str], list[list[Any]]]]:
    """(title, headers, rows) for a report: per-run summary, pairwise record, the most disputed tasks;
    none when the runs share no task (every figure would be a zero that says nothing)."""
    s = cmp.summary
    if not s["shared_tasks"]:
        return []
    out: list[tuple[str, list[str], list[list[Any]]]] = [
        (
            f"run comparison (shared tasks): {s['shared_tasks']} shared, {s['differing']} differ",
            ["run", "mean item score", "right"],
            [[r["label"], s["mean"][r["run_id"]], s["right"][r["run_id"]]] for r in cmp.runs],
        ),
        (
            "run comparison: pairwise (wins/ties/losses of the first run on per-task score)",
            ["run A", "run B", "wins", "ties", "losses"],
            [[p["a"], p["b"], p["wins"], p["ties"], p["losses"]] for p in s["pairwise"]],
        ),
    ]
    disputed = [r for r in cmp.rows if r.differ][:top]
    if disputed:
        out.append(
            (
                f"run comparison: largest disagreements (top {len(disputed)})",
                ["task", "spread", *[f"run {r['run_id']}" for r in cmp.runs]],
                [[row.source_id or row.task_id, row.spread, *[c.score for c in row.cells]] for row in disputed],
            )
        )
    return out
