"""``chainmark worker``: run the trajectories of queued runs (``chainmark run --queue``), one worker
process per host or several, all sharing one PostgreSQL database."""

from __future__ import annotations

import math
import sys
import time
from typing import TYPE_CHECKING, Any

from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx
from tui.safe_text import visible

if TYPE_CHECKING:
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
    help="Only these queued runs (repeatable; default: every queued run, oldest first).",
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
@click.option("--json", "as_json", is_flag=True, help="Print what this worker did as one JSON document.")
@pass_ctx
def worker_cmd(
    app: AppContext,
    run_ids: tuple[int, ...],
    concurrency: int,
    until_empty: bool,
    lease_seconds: float | None,
    as_json: bool,
) -> None:
    """Claim and run trajectories of queued runs (`chainmark run --queue`); PostgreSQL only."""
    from evaluation.harness.lease import ttl_seconds
    from evaluation.harness.worker import WorkerOptions, work_blocking
    from evaluation.harness.workqueue import NEEDS_POSTGRES, this_worker

    if not app.url.startswith("postgresql"):
        raise click.ClickException(NEEDS_POSTGRES)
    ttl = lease_seconds or ttl_seconds()
    host, pid = this_worker()
    options = WorkerOptions(
        concurrency=concurrency, run_ids=list(run_ids) or None, until_empty=until_empty, ttl=ttl, poll=min(1.0, ttl / 4)
    )
    click.echo(
        f"worker {host} pid {pid}: -j {concurrency}, claims expire after {ttl:g} s"
        + (f", runs {', '.join(map(str, run_ids))}" if run_ids else ", every queued run"),
        err=True,
    )
    try:
        report = work_blocking(
            app.engine, app.blobs, options, progress=_WorkerLine(f"worker {host}:{pid}"), actor=app.actor
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
    }
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"worker {host}:{pid}: done {report.done}, failed {report.failed} in "
            f"{len(report.runs)} run(s)" + (f", {report.lost} taken over by others" if report.lost else "")
        )
    for run_id, why in report.stopped.items():
        click.echo(f"worker left run {run_id}: {why}", err=True)
    if report.stopped:
        raise SystemExit(1)


def register(cli: click.Group) -> None:
    cli.add_command(worker_cmd)
