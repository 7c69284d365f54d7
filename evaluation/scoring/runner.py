"""Score a stored run: load → profile → CheckpointResult rows; returns the paper's numbers (``ScoreResult``).

Scoring never calls a model: judge-dependent checks use stored verdicts (``chainmark judge`` makes
them) and anything not judged yet is counted as failed and reported as ``pending_judgements``.
Re-scoring replaces this run's CheckpointResult rows for the same method and scoring mode.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evaluation.benchmarks import ScoreContext, UnknownProfile, get_profile
from evaluation.benchmarks.base import Profile
from evaluation.judges.oracle import StoreOracle
from evaluation.scoring.embedding import get_embedder
from store.gc_pause import gc_paused
from evaluation.scoring.items import Item
from evaluation.scoring.loader import LoadedRun, Reader, connection_of, load_run, run_header, trajectory_chunks
from store import plain_rows, read_scope
from store.core_tables import checkpointresult

if TYPE_CHECKING:  # built by the profile (``evaluation.benchmarks.base.result``), after the run is read
    from evaluation.scoring.results import ScoreResult


def profile_for(loaded: LoadedRun) -> Profile:
    """The benchmark's ``settings.profile`` if set, else its source format, else its name."""
    settings = loaded.benchmark.get("settings") or {}
    wanted = settings.get("profile") or loaded.benchmark.get("source_format") or ""
    try:
        return get_profile(wanted)
    except UnknownProfile:
        try:
            return get_profile(loaded.benchmark.get("name") or "")
        except UnknownProfile:
            pass
        raise


def _oracle(
    session: Reader,
    items: list[Item],
    prefer_judges: list[str] | None,
    mode: str,
    judged: bool,
    benchmark: str | None = None,
) -> StoreOracle:
    """The run's stored verdicts; with ``judged`` False none of them (every judged check is pending), as a
    reference evaluator that was given no judge sees the run. ``benchmark``: whose authored rubric the
    rubric judge's questions are asked with."""
    if judged:
        return StoreOracle(session, items, prefer=prefer_judges, mode=mode, benchmark=benchmark)
    return StoreOracle(session, items, prefer=[], only=True, mode=mode, benchmark=benchmark)


def score_loaded(
    session: Reader,
    loaded: LoadedRun,
    *,
    mode: str = "faithful",
    embedder: str = "minilm",
    prefer_judges: list[str] | None = None,
    judged: bool = True,
) -> ScoreResult:
    profile = profile_for(loaded)
    oracle = _oracle(session, loaded.items, prefer_judges, mode, judged, loaded.benchmark.get("name"))
    ctx = ScoreContext(
        mode=mode,
        run_mode=loaded.run.get("mode") or "atomic",
        oracle=oracle,
        embedder_factory=lambda: get_embedder(embedder),
    )
    res = profile.score(loaded.items, ctx)
    return _identify(res, loaded, [oracle], edited_notes(loaded))


CHUNK = 10_000
"""Trajectories loaded and scored at a time, for profiles that take a run in chunks (``score_chunks``):
a 100,000-trajectory run never has more than this many items in memory."""


def score_chunked(
    session: Reader,
    header: LoadedRun,
    ranges: list[tuple[int, int]],
    *,
    mode: str = "faithful",
    embedder: str = "minilm",
    prefer_judges: list[str] | None = None,
    judged: bool = True,
) -> ScoreResult:
    """``score_loaded`` for a run given as trajectory id ranges: each chunk is loaded, handed to the
    profile with its own judge oracle, and dropped before the next is loaded."""
    profile: Any = profile_for(header)
    oracles: list[StoreOracle] = []
    edits: tuple[list[str], list[str]] = ([], [])
    ctx = ScoreContext(
        mode=mode,
        run_mode=header.run.get("mode") or "atomic",
        embedder_factory=lambda: get_embedder(embedder),
    )

    def chunks() -> Iterator[list[Item]]:
        for first, last in ranges:
            items = load_run(session, int(header.run["id"]), id_range=(first, last)).items
            ctx.oracle = _oracle(session, items, prefer_judges, mode, judged, header.benchmark.get("name"))
            oracles.append(ctx.oracle)
            restored, unknown = _edited(items)
            edits[0].extend(restored)
            edits[1].extend(unknown)
            yield items
            del items  # the profile has scored it: free it before the next chunk is loaded

    res = profile.score_chunks(chunks(), ctx)
    return _identify(res, header, oracles, _edit_notes(*edits))


def _identify(res: ScoreResult, loaded: LoadedRun, oracles: list[StoreOracle], notes: list[str]) -> ScoreResult:
    """The run's identity and what the judge oracles saw, added to a profile's result."""
    res.add_notes(*notes)
    res.run_id = loaded.run["id"]
    res.run_name = loaded.run.get("name")
    res.benchmark = loaded.benchmark.get("name")
    res.model = loaded.model
    templates: dict[str, Any] = {}
    for oracle in oracles:
        templates.update(oracle.prompts.templates)
    res.judges_used = sorted(set().union(*(o.used_judges for o in oracles)))
    res.pending_by_judge = _count_by_judge([r for o in oracles for r in o.pending])
    res.judge_prompts = {j: t.describe() for j, t in sorted(templates.items())}
    return res


def edited_notes(loaded: LoadedRun) -> list[str]:
    """Say which trajectories ran on a task that was edited after this run, and how they were scored."""
    return _edit_notes(*_edited(loaded.items))


def _edited(items: list[Item]) -> tuple[list[str], list[str]]:
    """The names of the items whose task was edited after the run: (restored, not restorable)."""

    def name(it: Item) -> str:
        return str(it.task.get("source_id") or it.task.get("id"))

    restored = [name(it) for it in items if it.trajectory.get("edited_after_run") == "restored"]
    unknown = [name(it) for it in items if it.trajectory.get("edited_after_run") == "unrecorded"]
    return restored, unknown


def _edit_notes(restored: list[str], unknown: list[str]) -> list[str]:
    notes = []

    def names(ids: list[str]) -> str:
        return ", ".join(ids[:10]) + (" …" if len(ids) > 10 else "")

    if restored:
        notes.append(
            f"edited after this run: {len(restored)} task(s) ({names(restored)}); scored with the revision "
            f"each trajectory ran on"
        )
    if unknown:
        notes.append(
            f"edited after this run: {len(unknown)} task(s) ({names(unknown)}) whose old revision is not in "
            f"the audit trail; scored with the current task — re-run them for a faithful score"
        )
    return notes


def _count_by_judge(pending: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in pending:
        out[r.judge] = out.get(r.judge, 0) + 1
    return out


def write_outcomes(session: Reader, outcomes: list[tuple[int, Any]], mode: str) -> int:
    """Upsert CheckpointResult rows (unique per trajectory, checkpoint, method, mode) with executemany
    statements: 30k ORM objects took longer than scoring them (bench_scoring --command)."""
    if not outcomes:
        return 0
    conn = connection_of(session)
    latest: dict[tuple[int, int, str], tuple[Any, ...]] = {}  # the last outcome per key wins
    n = 0
    for traj, o in outcomes:
        if o.checkpoint_id is None:
            continue
        detail = o.detail
        score = detail.get("score")
        # the _VALUES columns, in order
        latest[(traj, o.checkpoint_id, o.method)] = (
            o.passed,
            score if isinstance(score, (int, float)) else None,
            o.matched_event_id,
            detail,
        )
        n += 1
    (_write_sqlite if plain_rows.applies(conn) else _write_core)(conn, checkpointresult, latest, mode, utcnow())
    return n


def _write_core(
    conn: Any, table: Any, outcomes: dict[tuple[int, int, str], tuple[Any, ...]], mode: str, now: Any
) -> None:
    """Insert the new rows and update the existing ones with Core executemany statements."""
    latest = {k: dict(zip(_VALUES, v)) for k, v in outcomes.items()}
    traj_ids = sorted({k[0] for k in latest})
    existing: dict[tuple[int, int, str], int] = {}
    for start in range(0, len(traj_ids), 500):
        for rid, traj, cp, method in conn.execute(
            sa.select(table.c.id, table.c.trajectory_id, table.c.checkpoint_id, table.c.method).where(
                table.c.trajectory_id.in_(traj_ids[start : start + 500]), table.c.scoring_mode == mode
            )
        ).all():
            existing[(traj, cp, method)] = rid
    inserts = [
        {"trajectory_id": k[0], "checkpoint_id": k[1], "method": k[2], "scoring_mode": mode, "created_at": now, **v}
        for k, v in latest.items()
        if k not in existing
    ]
    updates = [{"_id": existing[k], **{f"_{f}": x for f, x in v.items()}} for k, v in latest.items() if k in existing]
    if inserts:
        conn.execute(sa.insert(table), inserts)
    if updates:
        conn.execute(
            sa.update(table)
            .where(table.c.id == sa.bindparam("_id"))
            .values(
                passed=sa.bindparam("_passed"),
                score=sa.bindparam("_score"),
                matched_event_id=sa.bindparam("_matched_event_id"),
                detail=sa.bindparam("_detail"),
            ),
            updates,
        )


_KEY = ("trajectory_id", "checkpoint_id", "method", "scoring_mode")
_VALUES = ("passed", "score", "matched_event_id", "detail")


def _write_sqlite(
    conn: Any, table: Any, latest: dict[tuple[int, int, str], tuple[Any, ...]], mode: str, now: Any
) -> None:
    """The same rows as ``_write_core``'s statements in one plain ``executemany`` (``store.plain_rows``)
    of an upsert on the table's unique key: no read of the stored rows' ids first, and no Core
    per-row parameter processing (most of writing 30,000 rows). The values go by column (the keys'
    and values' tuples transposed), not as a dict per row."""
    n = len(latest)
    trajectory_ids, checkpoint_ids, methods = zip(*latest) if n else ((), (), ())
    values = list(zip(*latest.values())) if n else [(), (), (), ()]
    columns = [trajectory_ids, checkpoint_ids, methods, [mode] * n, [now] * n, *values]
    plain_rows.upsert_columns(
        conn, table, (*_KEY, "created_at", *_VALUES), columns, conflict=_KEY, update=_VALUES, keep_equal=True
    )


def utcnow() -> datetime:
    """The rows' ``created_at``: timezone-aware UTC, as ``store.models.utcnow`` (not imported: no ORM here)."""
    return datetime.now(timezone.utc)


UNSAFE_SANDBOX_NOTE = (
    "model-written code in this run ran WITHOUT an OS-level sandbox "
    "(--unsafe-in-process-sandbox): in-process guards only"
)


def score_run(
    engine: Engine,
    run_id: int,
    *,
    mode: str = "faithful",
    embedder: str = "minilm",
    prefer_judges: list[str] | None = None,
    write: bool = True,
    actor: str | None = None,
    keep: list[Any] | None = None,
    judged: bool = True,
) -> ScoreResult:
    """``judged``: False scores as if no verdict were stored (conformance with a reference that gets no judge).
    ``keep``: a list the loaded run is appended to instead of being freed here (a run scored in one
    piece; chunks are always freed). A command that exits next hands it to the exit (``tui.exit_keep``):
    freeing a 10,000-trajectory run's objects one by one is ≈ 0.08 s that the exit does not need."""
    with gc_paused():  # many small objects, no cycles among them (store/gc_pause.py)
        return _score_run(engine, run_id, mode, embedder, prefer_judges, write, actor, keep, judged)


def _score_run(
    engine: Engine,
    run_id: int,
    mode: str,
    embedder: str,
    prefer_judges: list[str] | None,
    write: bool,
    actor: str | None,
    keep: list[Any] | None = None,
    judged: bool = True,
) -> ScoreResult:
    # Plain connections, not ORM sessions: scoring reads and writes through SQLAlchemy Core
    # (``store.core_tables``), so the command never builds the SQLModel classes. Its writes are
    # CheckpointResult rows, which the audit trail does not record: ``actor`` names nobody here.
    del actor
    with read_scope(engine) as s:
        header = run_header(s, run_id)
        chunked = hasattr(profile_for(header), "score_chunks")
        ranges = trajectory_chunks(s, run_id, CHUNK) if chunked else []
        if len(ranges) > 1:
            res = score_chunked(
                s, header, ranges, mode=mode, embedder=embedder, prefer_judges=prefer_judges, judged=judged
            )
        else:
            loaded = load_run(s, run_id)
            res = score_loaded(s, loaded, mode=mode, embedder=embedder, prefer_judges=prefer_judges, judged=judged)
            if keep is not None:
                keep.append(loaded)
            del loaded  # the items: not needed to write the outcomes
        config = header.run["config"]
        if config.get("unsafe_in_process_sandbox"):
            res.unsafe_in_process_sandbox = True
            res.add_notes(UNSAFE_SANDBOX_NOTE)
        warned = config.get("import_warnings")
        if warned:  # what the import could not reproduce of the reference: the numbers may differ from it
            res.add_notes(*(f"import: {w}" for w in warned))
    if write:
        with engine.begin() as conn:
            res.checkpoint_results_written = write_outcomes(conn, res.outcomes, mode)
    return res
