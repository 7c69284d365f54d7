"""``chainmark worker``: run the trajectories of queued runs (``chainmark run --queue``) and judge the
items of queued judges (``chainmark judge … --queue``), one worker process per host or several, all
sharing one PostgreSQL database."""

from __future__ import annotations

import math
import sys
import time
from typing import TYPE_CHECKING, Any

from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx
from tui.safe_text import visible

if TYPE_CHECKING:
    from evaluation.judges.worker import JudgeTally
    from evaluation.harness.runner import RunProgress


class _WorkerLine:
    """Progress of this worker on stderr: one line per run, throttled (rewritten on a terminal)."""

    def __init__(self, prefix: str, interval: float = 1.0):
        self.prefix, self.tty = prefix, sys.stderr.isatty()
        self.interval = 0.1 if self.tty else interval
        self.last = 0.0

    def __call__(self, p: RunProgress) -> None:
        now = time.monotonic()
        if not p.finished and now - self.last < self.interval:
            return
        self.last = now
        line = (
            f"{self.prefix} run {p.run_id}: done={p.done} failed={p.failed} running={p.running} "
            f"calls={p.api_calls} tokens={p.tokens} {p.status if p.finished else ''}"
        ).rstrip()
        if self.tty:
            click.raw_echo("\r" + visible(line) + ("\n" if p.finished else ""), err=True, nl=False)
        else:
            click.echo(line, err=True)


class _JudgeLine(_WorkerLine):
    """The judging progress of this worker on stderr, throttled like the runs' lines."""

    def judged(self, t: JudgeTally) -> None:
        now = time.monotonic()
        if t.running and now - self.last < self.interval:
            return
        self.last = now
        line = (
            f"{self.prefix} judging: judged={t.judged} failed={t.failed} running={t.running} "
            f"verdicts={t.verdicts} calls={t.model_calls} cached={t.cache_hits}"
        )
        if self.tty:
            click.raw_echo("\r" + visible(line) + ("\n" if not t.running else ""), err=True, nl=False)
        else:
            click.echo(line, err=True)


def _lease(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and (not math.isfinite(value) or not 0.5 <= value <= 86400):
        raise click.BadParameter(f"must be a number of seconds from 0.5 to 86400 (got {value})")
    return value


@click.command("worker")
@click.option(
    "--run",
    "run_ids",
    type=int,
    multiple=True,
    metavar="RUN_ID",
    help="Only these queued runs and their queued judge items (repeatable; default: every one, oldest first).",
)
@click.option(
    "-j",
    "--concurrency",
    type=click.IntRange(1, 4096),
    default=4,
    show_default=True,
    help="Trajectories at once in this process.",
)
@click.option(
    "--until-empty",
    "--once",
    "until_empty",
    is_flag=True,
    help="Exit once the selected runs have nothing left to run (default: keep waiting for work).",
)
@click.option(
    "--lease-seconds",
    type=float,
    callback=_lease,
    help="A claim not renewed this long is taken over by another worker (default: the lease_seconds setting).",
)
@click.option("--runs-only", is_flag=True, help="Run trajectories of queued runs; leave queued judge items alone.")
@click.option("--judges-only", is_flag=True, help="Judge queued judge items; leave queued runs alone.")
@click.option("--json", "as_json", is_flag=True, help="Print what this worker did as one JSON document.")
@pass_ctx
def worker_cmd(
    app: AppContext,
    run_ids: tuple[int, ...],
    concurrency: int,
    until_empty: bool,
    lease_seconds: float | None,
    runs_only: bool,
    judges_only: bool,
    as_json: bool,
) -> None:
    """Claim and run trajectories of queued runs (`chainmark run --queue`) and judge queued judge items
    (`chainmark judge … --queue`); PostgreSQL only."""
    from evaluation.harness.lease import ttl_seconds
    from evaluation.harness.worker import WorkerOptions, work_blocking
    from evaluation.harness.workqueue import NEEDS_POSTGRES, this_worker
    from store.dialects import url_is_postgresql

    if runs_only and judges_only:
        raise click.UsageError("give --runs-only or --judges-only, not both")
    if not url_is_postgresql(app.url):
        raise click.ClickException(NEEDS_POSTGRES)
    ttl = lease_seconds or ttl_seconds()
    host, pid = this_worker()
    options = WorkerOptions(
        concurrency=concurrency,
        run_ids=list(run_ids) or None,
        until_empty=until_empty,
        ttl=ttl,
        poll=min(1.0, ttl / 4),
        runs=not judges_only,
        judges=not runs_only,
    )
    click.echo(
        f"worker {host} pid {pid}: -j {concurrency}, claims expire after {ttl:g} s"
        + (f", runs {', '.join(map(str, run_ids))}" if run_ids else ", every queued run")
        + (
            ", judge items only"
            if judges_only
            else ", trajectories only"
            if runs_only
            else ", trajectories and judge items"
        ),
        err=True,
    )
    line = _JudgeLine(f"worker {host}:{pid}")
    try:
        report = work_blocking(
            app.engine, app.blobs, options, progress=line, judge_progress=line.judged, actor=app.actor
        )
    except KeyboardInterrupt:
        click.echo(f"\nworker {host}:{pid} stopped; what it held goes back to the queue", err=True)
        raise SystemExit(130) from None
    summary: dict[str, Any] = {
        "host": host,
        "pid": pid,
        "done": report.done,
        "failed": report.failed,
        "lost": report.lost,
        "runs": {str(k): v.to_dict() for k, v in report.runs.items()},
        "stopped": {str(k): v for k, v in report.stopped.items()},
        "judging": report.judging.to_dict(),
    }
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"worker {host}:{pid}: done {report.done}, failed {report.failed} in "
            f"{len(report.runs)} run(s)" + (f", {report.lost} taken over by others" if report.lost else "")
        )
        j = report.judging
        if j.judged or j.failed or j.lost:
            click.echo(
                f"worker {host}:{pid}: judged {j.judged} item(s) ({j.verdicts} verdict(s), {j.model_calls} model "
                f"call(s), {j.cache_hits} from cache), failed {j.failed}"
                + (f", {j.lost} taken over by others" if j.lost else "")
            )
    for run_id, why in report.stopped.items():
        click.echo(f"worker left run {run_id}: {why}", err=True)
    if report.judging.last_error:
        click.echo(f"last judge failure: {report.judging.last_error}", err=True)
    if report.stopped:
        raise SystemExit(1)


def register(cli: click.Group) -> None:
    cli.add_command(worker_cmd)
