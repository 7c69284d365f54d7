"""``chainmark run …`` and ``chainmark runs …``: running a benchmark against a model endpoint
(resumable, replayable) and looking at the runs. The endpoints are ``endpoints.py``'s."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple


from evaluation.vocab import MAX_COUNT, MAX_LIMIT, MAX_SECONDS, RUN_MODES
from tui.commands import _click as click
from tui.safe_text import visible
from tui.context import AppContext, emit_json, pass_ctx, table

HIDDEN_MODEL = "(hidden)"  # tui.blind_view's word, without importing the store on every command's start

if TYPE_CHECKING:
    from evaluation.harness.runner import RunProgress


class _ProgressLine:
    """One plain-text progress line on stderr: rewritten in place on a terminal, throttled lines otherwise."""

    def __init__(self, interval: float = 1.0):
        self.tty = sys.stderr.isatty()
        self.interval = interval if not self.tty else 0.1
        self.last = 0.0

    def __call__(self, p: RunProgress) -> None:
        now = time.monotonic()
        if not p.finished and now - self.last < self.interval and p.completed < p.total - p.skipped:
            return
        self.last = now
        todo = max(1, p.total - p.skipped)
        width = 24
        filled = int(width * p.completed / todo)
        bar = "#" * filled + "." * (width - filled)
        line = f"[{bar}] {p.line()}"
        if self.tty:
            click.raw_echo("\r" + visible(line) + ("\n" if p.finished else ""), err=True, nl=False)
        else:
            click.echo(line, err=True)


def _count(least: int, most: int) -> Any:
    """A click callback: a whole number in [least, most], with a message that names the option."""

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        if not least <= value <= most:
            raise click.BadParameter(f"must be a whole number from {least} to {most} (got {value})")
        return value

    return check


def _seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise click.BadParameter(
            f"must be a finite number of seconds above 0 and at most {MAX_SECONDS:g} (got {value})"
        )
    return value


@click.command("run")
@click.option("--benchmark", "-b", help="Benchmark to run (not needed with --resume).")
@click.option("--endpoint", "-e", help="Endpoint name (not needed with --resume).")
@click.option("--mode", "-m", type=click.Choice(RUN_MODES), help="Protocol: atomic, code, react, plan or step.")
@click.option(
    "-j",
    "--concurrency",
    type=int,
    default=4,
    show_default=True,
    callback=_count(1, 4096),
    help="Trajectories at once.",
)
@click.option("--limit", type=int, callback=_count(1, MAX_LIMIT), help="Only the first N tasks (by id), N ≥ 1.")
@click.option("--task", "task_ids", type=int, multiple=True, help="Only these task ids (repeatable).")
@click.option("--status", help="Only tasks in this authoring status (e.g. verified).")
@click.option("--resume", "resume_id", type=int, metavar="RUN_ID", help="Continue a run: finished tasks are kept.")
@click.option("--retry-failed", is_flag=True, help="With --resume: also redo failed trajectories.")
@click.option("--replay", is_flag=True, help="Answer every model call from the replay cache (offline).")
@click.option("--max-rounds", type=int, callback=_count(1, MAX_COUNT), help="Model calls per task (default per mode).")
@click.option(
    "--max-tool-calls", type=int, callback=_count(0, MAX_COUNT), help="Tool calls per task (default per mode)."
)
@click.option("--max-tokens", type=int, callback=_count(1, MAX_COUNT), help="Total tokens per task.")
@click.option(
    "--max-seconds",
    type=float,
    default=600.0,
    show_default=True,
    callback=_seconds,
    help="Wall seconds per task (finite, above 0); a task out of time without an answer is failed.",
)
@click.option(
    "--retries",
    type=int,
    default=5,
    show_default=True,
    callback=_count(1, 100),
    help="Attempts per model call (429/5xx/timeouts).",
)
@click.option("--name", help="A name for the run.")
@click.option(
    "--unsafe-in-process-sandbox",
    "unsafe_sandbox",
    is_flag=True,
    help="Run model-written code even where no OS-level sandbox (bubblewrap) works: in-process "
    "guards and rlimits only, NOT a security boundary. Recorded in the run and its reports.",
)
@click.option(
    "--procs",
    type=int,
    default=None,
    callback=_count(1, 256),
    help="Harness processes that run the trajectories (the parent keeps the database). Default: one "
    "per 128 of -j, at most the CPUs; runs of model code stay in one.",
)
@click.option(
    "--queue",
    is_flag=True,
    help="Do not execute: put the run's trajectories in the database for `chainmark worker` "
    "processes on any hosts (PostgreSQL only).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the final summary as one JSON document (the run id goes to stderr)."
)
@pass_ctx
def run_cmd(
    app: AppContext,
    benchmark: str | None,
    endpoint: str | None,
    mode: str | None,
    concurrency: int,
    limit: int | None,
    task_ids: tuple[int, ...],
    status: str | None,
    resume_id: int | None,
    retry_failed: bool,
    replay: bool,
    max_rounds: int | None,
    max_tool_calls: int | None,
    max_tokens: int | None,
    max_seconds: float | None,
    retries: int,
    name: str | None,
    unsafe_sandbox: bool,
    procs: int | None,
    queue: bool,
    as_json: bool,
) -> None:
    """Run a benchmark against an endpoint; prints the run id, progress goes to stderr."""
    from store.gc_pause import gc_paused

    # Start-up builds modules and rows that all stay alive: no collection walks them meanwhile (the
    # run freezes them before its first model call, heap.py). SQLAlchemy Core on plain connections
    # up to that call: no SQLModel classes to build.
    with gc_paused():
        import sqlalchemy as sa

        from evaluation.harness import Budgets, RetryPolicy, RunSpec, create_run, run_blocking
        from evaluation.harness.lease import LeaseHeld
        from store import read_scope
        from store.claims import NEEDS_POSTGRES
        from store.core_tables import run as run_table
        from store.dialects import url_is_postgresql

        if queue and not url_is_postgresql(app.url):
            raise click.ClickException(NEEDS_POSTGRES)
        this_run = sa.select(run_table.c.config).where(run_table.c.id == resume_id)
        if resume_id is not None:
            run_id = resume_id
            with read_scope(app.engine) as conn:
                if conn.execute(this_run).first() is None:
                    raise click.ClickException(f"no run with id {run_id}")
            if unsafe_sandbox:
                with app.engine.begin() as conn:
                    config = conn.execute(this_run).scalar_one()
                    config = {**(config or {}), "unsafe_in_process_sandbox": True}
                    conn.execute(sa.update(run_table).where(run_table.c.id == run_id).values(config=config))
        else:
            missing = [o for o, v in (("--benchmark", benchmark), ("--endpoint", endpoint), ("--mode", mode)) if not v]
            if missing:
                raise click.UsageError(f"missing {', '.join(missing)} (or give --resume RUN_ID)")
            spec = RunSpec(
                benchmark or "",
                endpoint or "",
                mode or "",
                concurrency=concurrency,
                limit=limit,
                budgets=Budgets(max_rounds, max_tool_calls, max_tokens, max_seconds),
                replay=replay,
                name=name,
                task_ids=list(task_ids) or None,
                status=status,
                retry=RetryPolicy(attempts=retries),
                unsafe_in_process_sandbox=unsafe_sandbox,
            )
            with app.engine.begin() as conn:
                run_id = create_run(conn, spec).id
        if not queue and resume_id is not None and url_is_postgresql(app.url):
            from evaluation.harness.run_status import is_queued

            with read_scope(app.engine) as conn:
                queue = is_queued(conn.execute(this_run).one())  # a queued run stays queued
    if queue:
        _enqueue(app, run_id, retry_failed, as_json)
        return
    if as_json:  # stdout holds the summary document alone
        click.echo(f"run {run_id}", err=True)
    else:
        click.echo(run_id)
        sys.stdout.flush()
    try:
        summary = run_blocking(
            app.engine,
            app.blobs,
            run_id,
            progress=_ProgressLine(),
            retry_failed=retry_failed,
            actor=app.actor,
            procs=procs,
        )
    except LeaseHeld as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted; continue with: chainmark run --resume {run_id}", err=True)
        raise SystemExit(130) from None
    if as_json:
        emit_json(summary.to_dict())
    if summary.halt_kind == "store":
        saved = (
            f" Its status could not be recorded either ({summary.status_not_saved}), so the database may "
            f"still call it running."
            if summary.status_not_saved
            else ""
        )
        click.echo(
            f"run {run_id} failed: {summary.halted}. Trajectories already finished are saved; the rest "
            f"stay unfinished.{saved} Once the database takes writes again (free space, a writable file, "
            f"no other writer holding the lock), continue with: chainmark run --resume {run_id}",
            err=True,
        )
        raise SystemExit(1)
    if summary.halt_kind == "process":
        click.echo(
            f"run {run_id} failed: {summary.halted}. Trajectories already finished are saved; continue "
            f"with: chainmark run --resume {run_id}",
            err=True,
        )
        raise SystemExit(1)
    if summary.halted:
        click.echo(
            f"run {run_id} stopped: {summary.halted}. Tasks not started are kept; once the endpoint "
            f"answers, continue with: chainmark run --resume {run_id} --retry-failed",
            err=True,
        )
        raise SystemExit(1)
    if summary.failed:
        click.echo(f"{summary.failed} trajectories failed; see `chainmark runs show {run_id}`", err=True)


def _enqueue(app: AppContext, run_id: int, retry_failed: bool, as_json: bool) -> None:
    """``run --queue``: the run's open trajectories go to the workers' queue; nothing runs here."""
    from evaluation.harness.runner import _task_ids
    from evaluation.harness.workqueue import enqueue
    from evaluation.harness.lease import LeaseHeld, leases
    from store import read_only, session_scope
    from store.models import Run

    with session_scope(read_only(app.engine)) as s:
        holder = leases(s, [run_id]).get(run_id)
    if holder is not None and not holder.stale:  # one `chainmark run` executes it now: no workers beside it
        raise click.ClickException(str(LeaseHeld(run_id, holder)))
    with session_scope(app.engine, app.actor) as s:
        run = s.get(Run, run_id)
        assert run is not None
        left = enqueue(s, run_id, _task_ids(s, run), retry_failed=retry_failed)
        status = run.status
    if as_json:
        click.echo(f"run {run_id}", err=True)
        emit_json({"run_id": run_id, "status": status, "queued": left})
        return
    click.echo(run_id)
    click.echo(
        f"run {run_id} queued: {left} trajector{'ies' if left != 1 else 'y'} open; start "
        f"`chainmark worker` on each host (watch with `chainmark runs show {run_id}`)",
        err=True,
    )


@click.group("runs")
def runs_group() -> None:
    """List and inspect runs."""


_RUNS = (
    "SELECT run.id, run.name, run.mode, run.prompt_version, CAST(run.budgets AS TEXT), run.concurrency, "
    "run.status, CAST(run.config AS TEXT), run.created_at, run.started_at, run.finished_at, benchmark.name, "
    "modelendpoint.name FROM run JOIN benchmark ON benchmark.id = run.benchmark_id "
    "LEFT OUTER JOIN modelendpoint ON modelendpoint.id = run.endpoint_id"
)


class _RunRow(NamedTuple):
    id: int
    name: str
    mode: str
    prompt_version: str
    budgets: Any
    concurrency: int
    status: str
    config: Any
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    benchmark: str
    endpoint: str | None


def _runs(s: Any, run_ids: list[int] | None) -> list[_RunRow]:
    """The runs (all, or those of ``run_ids``) in id order, their JSON and timestamps decoded."""
    from store.sql import chunks, in_list, json_value, rows, timestamp

    asked: list[tuple[str, dict[str, Any]]] = [(_RUNS, {})]
    if run_ids:
        asked = [(f"{_RUNS} WHERE run.id IN {ids}", p) for ids, p in (in_list("run_id", c) for c in chunks(run_ids))]
    found = [
        _RunRow._make((*r[:4], json_value(r[4]), *r[5:7], json_value(r[7]), *map(timestamp, r[8:11]), *r[11:]))
        for sql, p in asked
        for r in rows(s, sql + " ORDER BY run.id", p)
    ]
    return sorted(found, key=lambda r: r.id) if len(asked) > 1 else found


def _run_rows(s: Any, run_ids: list[int] | None = None) -> list[dict[str, Any]]:
    """The listing's rows, read in plain SQL (``store.sql``: a sqlite3 connection, a SQLAlchemy
    connection or session): no ORM tables, and on SQLite no SQLAlchemy."""
    from evaluation.harness.run_status import RESUME_HINT, is_queued, leases, live_claims, shown_status
    from store.sql import rows

    runs = _runs(s, run_ids)
    counts: dict[int, dict[str, int]] = {}
    grouped = "SELECT trajectory.run_id, trajectory.status, count(*) FROM trajectory GROUP BY trajectory.run_id, trajectory.status"
    for rid, st, n in rows(s, grouped):
        counts.setdefault(rid, {})[st] = n
    out = []
    held = leases(s, [run.id or 0 for run in runs])
    queued = [run.id or 0 for run in runs if is_queued(run)]
    claims = live_claims(s, queued) if queued else {}
    for run in runs:
        c = counts.get(run.id or 0, {})
        status = shown_status(run.status, held.get(run.id or 0), claims.get(run.id or 0, 0) if is_queued(run) else None)
        out.append(
            {
                "id": run.id,
                "name": run.name,
                "benchmark": run.benchmark,
                "endpoint": run.endpoint,
                "mode": run.mode,
                "status": status,
                "resume": RESUME_HINT.format(run_id=run.id) if status == "interrupted" else None,
                "done": c.get("done", 0),
                "failed": c.get("failed", 0),
                "unfinished": sum(v for k, v in c.items() if k not in ("done", "failed")),
                "concurrency": run.concurrency,
                "prompt_version": run.prompt_version,
                "budgets": run.budgets,
                "replay": bool((run.config or {}).get("replay")),
                "queued": is_queued(run),
                "unsafe_in_process_sandbox": bool((run.config or {}).get("unsafe_in_process_sandbox")),
                "stopped_because": (run.config or {}).get("stopped_because"),
                "created_at": run.created_at.isoformat() if run.created_at else None,
                "started_at": run.started_at.isoformat() if run.started_at else None,
                "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            }
        )
    return out


@runs_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def runs_list(app: AppContext, as_json: bool) -> None:
    """Runs with their benchmark, endpoint, mode, status and trajectory counts."""
    from tui.blind_view import listing_scope, redact_run_row

    with app.reading() as s:
        rows = _run_rows(s)
        scope = listing_scope(app, s)
    rows = [redact_run_row(scope, r) for r in rows]
    if as_json:
        emit_json(rows)
        return
    click.echo(
        table(
            [
                [
                    r["id"],
                    r["benchmark"],
                    HIDDEN_MODEL if r.get("hidden") else (r["endpoint"] or ""),
                    r["mode"],
                    r["status"],
                    r["done"],
                    r["failed"],
                    r["unfinished"],
                    _tags(r),
                    (r["created_at"] or "")[:19],
                ]
                for r in rows
            ],
            ["run", "benchmark", "endpoint", "mode", "status", "done", "failed", "open", "", "created"],
        )
    )
    for r in rows:
        if r["resume"]:
            click.echo(f"run {r['id']} was interrupted; continue with: {r['resume']}")
    for note in dict.fromkeys(r["hidden"] for r in rows if r.get("hidden")):
        click.echo(f"note: {note}")


RUN_SHOW_LIMIT = 200
_PAGE = 900  # trajectories per query page (their ids go into an IN (...))


def _trajectory_pages(s: Any, run_id: int, offset: int, limit: int | None) -> Iterator[list[dict[str, Any]]]:
    """The run's trajectories in task order, a page at a time with their event counts (columns only)."""
    import sqlalchemy as sa
    from store.models import Event, Trajectory

    cols = (
        Trajectory.id,
        Trajectory.task_id,
        Trajectory.task_revision,
        Trajectory.status,
        Trajectory.final_answer,
        Trajectory.usage,
        Trajectory.error,
    )
    left = limit
    while left is None or left > 0:
        size = _PAGE if left is None else min(_PAGE, left)
        rows = s.execute(
            sa.select(*cols)
            .where(Trajectory.run_id == run_id)
            .order_by(Trajectory.task_id, Trajectory.id)
            .offset(offset)
            .limit(size)
        ).all()
        if not rows:
            return
        n_events = dict(
            s.execute(
                sa.select(Event.trajectory_id, sa.func.count())
                .where(Event.trajectory_id.in_([r[0] for r in rows]))  # type: ignore[attr-defined]
                .group_by(Event.trajectory_id)
            ).all()
        )
        yield [
            {
                "id": tid,
                "task_id": task,
                "task_revision": rev,
                "status": status,
                "final_answer": answer,
                "usage": usage,
                "error": error,
                "events": n_events.get(tid, 0),
            }
            for tid, task, rev, status, answer, usage, error in rows
        ]
        offset += len(rows)
        left = None if left is None else left - len(rows)
        if len(rows) < size:
            return


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _run_totals(s: Any, run_id: int) -> tuple[int, dict[str, int]]:
    """(trajectories, totals of tokens and of bytes sent to the model) over the whole run, streamed."""
    import sqlalchemy as sa

    from store.models import Trajectory

    n = 0
    totals = {"tokens": 0, "sent_bytes": 0, "sent_image_bytes": 0}
    for (usage,) in s.execute(
        sa.select(Trajectory.usage).where(Trajectory.run_id == run_id).execution_options(yield_per=2000)
    ):
        n += 1
        usage = usage or {}
        totals["tokens"] += int(usage.get("total_tokens") or 0)
        totals["sent_bytes"] += int(usage.get("sent_bytes") or 0)
        totals["sent_image_bytes"] += int(usage.get("sent_image_bytes") or 0)
    return n, totals


@runs_group.command("show")
@click.argument("run_id", type=int)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help=f"At most this many trajectories (default {RUN_SHOW_LIMIT}).",
)
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip this many trajectories first.")
@click.option("--all", "all_", is_flag=True, help="Every trajectory (streamed).")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def runs_show(app: AppContext, run_id: int, limit: int | None, offset: int, all_: bool, as_json: bool) -> None:
    """One run: settings, totals and its trajectories (status, answer, usage, error), 200 at a time
    by default (``--offset``/``--limit`` page, ``--all`` streams every one)."""
    from evaluation.harness.workqueue import workers_of
    from store import read_only, session_scope
    from tui.blind_view import redact_run_row, scope_at

    if all_ and limit is not None:
        raise click.UsageError("give --limit N or --all, not both")
    limit = None if all_ else (limit or RUN_SHOW_LIMIT)
    with session_scope(read_only(app.engine)) as s:
        rows = _run_rows(s, [run_id])
        if not rows:
            raise click.ClickException(f"no run with id {run_id}")
        data = redact_run_row(scope_at(app, s), rows[0])
        total, totals = _run_totals(s, run_id)
        data.update(totals)
        data["sent_bytes_per_trajectory"] = round(totals["sent_bytes"] / total) if total else 0
        data["workers"] = [w.to_dict() for w in workers_of(s, run_id)] if data["queued"] else []
        from evaluation.judges.queue import progress as judge_progress

        data["judging"] = [j.to_dict() for j in judge_progress(s, run_id)]
        pages = _trajectory_pages(s, run_id, offset, limit)
        if as_json:
            data["trajectories"] = [t for page in pages for t in page]
            data["trajectories_total"], data["offset"] = total, offset
            emit_json(data)
            return
        click.echo(
            f"run {data['id']} {data['name'] or ''}: {data['benchmark']} × {data['endpoint'] or HIDDEN_MODEL} "
            f"[{data['mode']}, {data['status']}{', replay' if data['replay'] else ''}]"
        )
        if data.get("hidden"):
            click.echo(f"note: {data['hidden']}")
        click.echo(f"prompt {data['prompt_version']}  budgets {json.dumps(data['budgets'])}  -j {data['concurrency']}")
        if data["unsafe_in_process_sandbox"]:
            click.echo(
                "sandbox: UNSAFE in-process (--unsafe-in-process-sandbox): model code ran without an OS-level sandbox"
            )
        click.echo(f"done {data['done']}  failed {data['failed']}  open {data['unfinished']}  tokens {data['tokens']}")
        if data["sent_bytes"]:
            click.echo(
                f"sent to the model {_mb(data['sent_bytes'])} ({_mb(data['sent_image_bytes'])} of it images), "
                f"{_mb(data['sent_bytes_per_trajectory'])} per trajectory"
            )
        if data["stopped_because"]:
            click.echo(f"stopped because {data['stopped_because']}")
        if data["resume"]:
            click.echo(f"interrupted (no live executor); continue with: {data['resume']}")
        if data["queued"]:
            click.echo(
                f"queued for workers: {len(data['workers'])} worker process(es) so far"
                + ("; none holds a trajectory now, start `chainmark worker`" if data["status"] == "queued" else "")
            )
            if data["workers"]:
                click.echo(
                    table(
                        [
                            [
                                w["host"],
                                w["pid"],
                                w["holding"],
                                w["done"],
                                w["failed"],
                                w["calls"],
                                w["retries"],
                                w["tokens"],
                                w["takeovers"],
                            ]
                            for w in data["workers"]
                        ],
                        ["host", "pid", "running", "done", "failed", "calls", "retries", "tokens", "taken over"],
                    )
                )
        if data["judging"]:
            click.echo("queued judging (`chainmark judge … --queue`, run by `chainmark worker`):")
            click.echo(
                table(
                    [
                        [
                            f"{j['judge']}@{j['endpoint']}",
                            j["mode"],
                            j["items"],
                            j["judged"],
                            j["failed"],
                            j["cancelled"],
                            j["open"],
                            j["running"],
                            j["verdicts"],
                            j["model_calls"],
                            j["cache_hits"],
                            j["takeovers"],
                            j["workers"],
                        ]
                        for j in data["judging"]
                    ],
                    [
                        "judge",
                        "mode",
                        "items",
                        "judged",
                        "failed",
                        "cancelled",
                        "open",
                        "running",
                        "verdicts",
                        "calls",
                        "cached",
                        "taken over",
                        "workers",
                    ],
                )
            )
        shown = 0
        for i, page in enumerate(pages):
            shown += len(page)
            lines = table(
                [
                    [
                        t["task_id"],
                        t["status"],
                        t["events"],
                        (t["usage"] or {}).get("api_calls", ""),
                        (t["usage"] or {}).get("tool_calls", ""),
                        (t["usage"] or {}).get("total_tokens", ""),
                        _short(t["final_answer"] or t["error"] or "", 60),
                    ]
                    for t in page
                ],
                ["task", "status", "events", "calls", "tools", "tokens", "answer / error"],
            ).split("\n")
            click.echo("\n".join(lines if i == 0 else lines[2:]))
        if shown == 0:
            click.echo(table([], ["task", "status", "events", "calls", "tools", "tokens", "answer / error"]))
    more = total - offset - shown
    if limit is not None and more > 0:
        click.echo(
            f"… {more} more trajector{'ies' if more != 1 else 'y'} not shown "
            f"(use --offset {offset + shown}, --limit N or --all)"
        )


@runs_group.command("cancel")
@click.argument("run_id", type=int)
@pass_ctx
def runs_cancel(app: AppContext, run_id: int) -> None:
    """Cancel a queued run on every host: workers stop claiming it, finish what they run and give
    the rest back (``chainmark run --resume RUN_ID --queue`` queues it again). The run's queued
    judging is cancelled too (items being judged finish; ``judge … --queue`` opens the rest again):
    nothing more is spent on a cancelled run."""
    from evaluation.judges import queue as judge_queue
    from evaluation.harness.workqueue import cancel, is_queued
    from store import read_only, session_scope
    from store.models import Run

    with session_scope(read_only(app.engine)) as s:
        run = s.get(Run, run_id)
        if run is None:
            raise click.ClickException(f"no run with id {run_id}")
        queued = is_queued(run)
        judging = sum(j.open for j in judge_queue.progress(s, run_id))
    if not queued and not judging:
        raise click.ClickException(
            f"run {run_id} is not a queued run and has no queued judging; a run executed by one "
            f"`chainmark run` is cancelled where it runs (ctrl+c, or the TUI's cancel)"
        )
    with session_scope(app.engine, app.actor) as s:
        before = cancel(s, run_id) if queued else None
        judged_off, judging_now = judge_queue.cancel_run(s, run_id)
    if before in ("queued", "running"):
        said = (
            f"run {run_id} cancelled; workers stop at their next claim or heartbeat; continue with: "
            f"chainmark run --resume {run_id} --queue"
        )
    elif before is None:
        said = f"run {run_id} is not a queued run (its trajectories are cancelled where it runs)"
    elif judged_off or judging_now:
        said = f"run {run_id} is {before}; its trajectories have nothing to cancel"
    else:
        said = f"run {run_id} is {before}; nothing to cancel"
    if judged_off or judging_now:
        said += f"; also cancelled {judged_off} queued judge item(s)"
        if judging_now:
            said += f" ({judging_now} being judged now will finish)"
        said += f"; `chainmark judge {run_id} … --queue` opens them again"
    click.echo(said)


def _tags(row: dict[str, Any]) -> str:
    return " ".join(
        t
        for t, on in (
            ("replay", row["replay"]),
            ("unsafe-sandbox", row["unsafe_in_process_sandbox"]),
            ("queued", row["queued"]),
        )
        if on
    )


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def register(cli: click.Group) -> None:
    cli.add_command(run_cmd)
    cli.add_command(runs_group)
