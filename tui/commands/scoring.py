"""``chainmark score``, ``chainmark judge`` and ``chainmark report``: paper metrics, LLM judges, tables."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from evaluation.judges.templates import available
from evaluation.scoring.matchers import MODES
from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx, table

_MODE = click.option(
    "--mode",
    type=click.Choice(MODES),
    default="faithful",
    show_default=True,
    help="faithful reproduces the reference scorer's quirks; fixed corrects them.",
)
_EMBEDDER = click.option(
    "--embedder",
    default="minilm",
    show_default=True,
    help="minilm (offline int8 MiniLM), hashing, or sentence-transformers:<model>.",
)


@click.command("score")
@click.argument("run_id", type=int)
@_MODE
@_EMBEDDER
@click.option(
    "--prefer-judge",
    "prefer",
    multiple=True,
    metavar="NAME",
    help="Use this judge's verdicts first when several judges answered (repeatable).",
)
@click.option("--no-write", is_flag=True, help="Do not store CheckpointResult rows.")
@click.option("--per-item", is_flag=True, help="With --json: include per-trajectory details.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@pass_ctx
def score_cmd(
    app: AppContext,
    run_id: int,
    mode: str,
    embedder: str,
    prefer: tuple[str, ...],
    no_write: bool,
    per_item: bool,
    as_json: bool,
) -> None:
    """Score RUN_ID with its benchmark's metrics (rules + stored verdicts; never calls a model)."""
    from store.gc_pause import gc_paused
    from tui.exit_keep import keep_until_exit

    # The collector is paused from the imports on, not only while scoring: building the ORM classes and
    # the result models makes many objects and no garbage worth a collection (≈ 0.06 s of start-up).
    kept: list[Any] = []  # the loaded run, the result and its JSON document: left to the exit to free
    with gc_paused():
        from evaluation.scoring import report as reports
        from evaluation.scoring.runner import score_run

        res = score_run(
            app.engine,
            run_id,
            mode=mode,
            embedder=embedder,
            prefer_judges=list(prefer),
            write=not no_write,
            actor=app.actor,
            keep=kept,
        )
    kept.append(res)
    keep_until_exit(kept)
    if _withheld_score(app, run_id, as_json):
        return
    if as_json:
        doc = res.public(per_item=per_item)
        kept.append(doc)
        emit_json(doc)
        return
    click.echo(
        f"run {res.run_id} · {res.benchmark} · {res.model} · profile {res.profile} · "
        f"mode {res.mode} · embedder {res.embedder or 'none'}"
    )
    scalar = [[k, reports.fmt(v)] for k, v in res.metrics.items() if not isinstance(v, (dict, list))]
    click.echo(table(scalar, ["metric", "value"]))
    if res.by_category:
        click.echo("")
        cats = res.by_category
        first = next(iter(cats.values()))
        keys = [k for k in first if not isinstance(first[k], (dict, list))]
        click.echo(
            table(
                [[c, *[reports.fmt(v.get(k)) for k in keys]] for c, v in cats.items()],
                [res.category_label or "category", *keys],
            )
        )
    if res.pending_judgements:
        by = ", ".join(f"{k}: {v}" for k, v in sorted(res.pending_by_judge.items()))
        click.echo(
            f"\n{res.pending_judgements} judgement(s) pending ({by}); they count as failed. "
            f"Run `chainmark judge {run_id} --judge NAME --endpoint E`."
        )
    if res.corrections:
        click.echo(f"corrections (fixed mode): {', '.join(res.corrections)}")
    for judge, desc in res.judge_prompts.items():
        click.echo(f"judge prompt {judge}: {desc}")
    for note in res.notes:
        click.echo(f"note: {note}")


def _withheld_score(app: AppContext, run_id: int, as_json: bool) -> bool:
    """Blind mode: the viewer still owes blind work on this run, so its model and scores stay hidden
    (the result is still stored unless ``--no-write``); prints the reason and says True."""
    from tui.blind_view import listing_scope

    with app.reading() as reader:  # a plain query first: no ORM is built for someone with no blind work
        scope = listing_scope(app, reader)
    reason = scope.why_hidden([run_id], what="scores hidden") if scope is not None else ""
    if not reason:
        return False
    if as_json:
        emit_json({"run_id": run_id, "hidden": reason})
    else:
        click.echo(f"run {run_id}: {reason}")
    return True


@click.command("judge")
@click.argument("run_id", type=int)
@click.option("--judge", "judge", required=True, type=click.LazyChoice(available), help="Judge (prompt template).")
@click.option("--endpoint", required=True, metavar="E", help="ModelEndpoint name to ask.")
@_MODE
@click.option("--limit", type=int, default=None, help="Ask at most this many questions.")
@click.option(
    "--rubric-version",
    default=None,
    metavar="V",
    help="chainmark-rubric: ask with the benchmark's authored rubric version V (default: its newest; "
    "the built-in rubric when none was authored).",
)
@click.option(
    "--queue",
    is_flag=True,
    help="PostgreSQL: put one judge item per finished trajectory in the database for `chainmark worker` "
    "instead of asking here.",
)
@click.option(
    "--cancel",
    is_flag=True,
    help="PostgreSQL: cancel this judge's queued items that no worker is judging now (--queue opens them again).",
)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def judge_cmd(
    app: AppContext,
    run_id: int,
    judge: str,
    endpoint: str,
    mode: str,
    limit: int | None,
    rubric_version: str | None,
    queue: bool,
    cancel: bool,
    as_json: bool,
) -> None:
    """Ask judge NAME (on endpoint E) every question RUN_ID's scoring still needs; cached by prompt hash."""
    if queue and cancel:
        raise click.UsageError("give --queue or --cancel, not both")
    if rubric_version is not None and (queue or cancel):
        raise click.UsageError("--rubric-version judges here; queued workers ask with the benchmark's newest rubric")
    if cancel:
        _cancel_judge(app, run_id, judge, endpoint, mode, as_json)
        return
    if queue:
        _queue_judge(app, run_id, judge, endpoint, mode, limit, as_json)
        return
    from evaluation.judges.runner import judge_run

    from evaluation.judges.client import JudgeError

    try:
        stats = judge_run(
            app.engine,
            app.blobs,
            run_id,
            judge,
            endpoint,
            mode=mode,
            limit=limit,
            actor=app.actor,
            rubric_version=rubric_version,
        )
    except JudgeError as exc:
        raise click.ClickException(_judge_failure(exc)) from exc
    if as_json:
        emit_json(stats)
        return
    click.echo(
        f"{stats['judge']} ({stats['template']}): {stats['verdicts']} verdict(s) stored, "
        f"{stats['model_calls']} model call(s), {stats['cache_hits']} from cache, "
        f"{stats['unparsed']} unparsable, {stats['asked_again']} asked again, {stats['rounds']} round(s)"
    )


def _judge_failure(exc: Exception) -> str:
    """One line: what the judge endpoint said, and that the answers stored before it are kept."""
    kept = getattr(exc, "kept", None)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if kept is None:
        return first
    return f"{first} ({kept} answer(s) stored before this are kept; run the command again to ask the rest)"


def _queue_judge(
    app: AppContext, run_id: int, judge: str, endpoint: str, mode: str, limit: int | None, as_json: bool
) -> None:
    """``judge --queue``: check what a judge run checks, then enqueue; nothing is asked here."""
    from evaluation.judges.queue import enqueue, not_judgeable
    from evaluation.judges.runner import check_judge
    from store import session_scope
    from store.claims import NEEDS_POSTGRES
    from store.dialects import is_postgresql

    if limit is not None:
        raise click.UsageError("--limit does not apply to --queue (every finished trajectory is queued)")
    if not is_postgresql(app.engine):
        raise click.ClickException(NEEDS_POSTGRES)
    name = check_judge(app.engine, run_id, judge, endpoint, mode, app.actor)
    with session_scope(app.engine, actor=app.actor) as s:
        n = enqueue(s, run_id, judge, endpoint, mode)
        later = not_judgeable(s, run_id)
    if as_json:
        emit_json({"run_id": run_id, "judge": name, "mode": mode, "queued": n, "not_finished": later})
        return
    click.echo(
        f"{name}: {n} trajector{'y' if n == 1 else 'ies'} of run {run_id} queued for judging ({mode}); "
        f"start `chainmark worker` on any host, follow with `chainmark runs show {run_id}`"
    )
    if later:
        click.echo(
            f"{later} trajector{'y' if later == 1 else 'ies'} not finished yet, not queued: "
            "queue the judge again once the run is done",
            err=True,
        )


def _cancel_judge(app: AppContext, run_id: int, judge: str, endpoint: str, mode: str, as_json: bool) -> None:
    """``judge --cancel``: workers finish the items they hold; the others are finished as cancelled."""
    from evaluation.judges.queue import cancel
    from store import session_scope
    from store.claims import NEEDS_POSTGRES
    from store.dialects import is_postgresql

    if not is_postgresql(app.engine):
        raise click.ClickException(NEEDS_POSTGRES)
    with session_scope(app.engine, actor=app.actor) as s:
        cancelled, running = cancel(s, run_id, judge, endpoint, mode)
    if as_json:
        emit_json({"run_id": run_id, "judge": f"{judge}@{endpoint}", "cancelled": cancelled, "running": running})
        return
    click.echo(
        f"{judge}@{endpoint} on run {run_id}: {cancelled} queued item(s) cancelled"
        + (f", {running} being judged now will finish" if running else "")
    )


@click.command("report")
@click.argument("run_ids", type=int, nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "csv", "html"]),
    default="md",
    show_default=True,
    help="md, csv (empty cells where there is no value) or html (one self-contained file with plots).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file instead of standard output.",
)
@_MODE
@_EMBEDDER
@click.option("--metric", default=None, help="Metric for the models × categories table (default per benchmark).")
@pass_ctx
def report_cmd(
    app: AppContext,
    run_ids: tuple[int, ...],
    fmt: str,
    output: Path | None,
    mode: str,
    embedder: str,
    metric: str | None,
) -> None:
    """Paper-style tables for RUN_IDs: models × metrics, models × categories, tool adoption, call counts."""
    from evaluation.scoring import report as reports
    from evaluation.scoring.runner import score_run
    from tui.blind_view import scope_at, visible_report_runs

    scope = scope_at(app)
    shown, withheld = visible_report_runs(scope, list(run_ids))
    if not shown:
        raise click.ClickException(withheld)
    run_ids = tuple(shown)
    results = [score_run(app.engine, r, mode=mode, embedder=embedder, write=False) for r in run_ids]
    extra: list[tuple[str, list[str], list[list[Any]]]] = []
    if fmt != "csv" and len(set(run_ids)) >= 2:
        from evaluation.compare import comparison_tables

        runs = [(r.run_id or 0, r.benchmark or "") for r in results]
        extra = comparison_tables(app.engine, runs, mode=mode, embedder=embedder)
    withheld_notes = [n for n in (withheld, scope.leaderboard_note() if len(set(run_ids)) >= 2 else "") if n]
    if len(set(run_ids)) >= 2 and not scope.leaderboard_note():  # people's preferences between these runs
        from evaluation.agreement.preferences import leaderboard_tables
        from store import read_only, session_scope

        with session_scope(read_only(app.engine)) as s:
            extra = [*extra, *leaderboard_tables(s, list(dict.fromkeys(run_ids)))]
    if fmt == "csv":
        text = reports.to_csv(results, metric, extra)
    elif fmt == "html":
        from evaluation.agreement.html_section import sections
        from evaluation.scoring.html_report import to_html
        from tui.commands.estimate import estimate_sections
        from tui.commands.agreement import agreement_results

        # agreement on what these runs produced, when people or judges rated it, and the runs' scores
        # estimated from a judge and people's labels together
        agreement = sections(agreement_results(app, resamples=200, runs=list(run_ids)))
        agreement += estimate_sections(app, list(run_ids))
        text = to_html(
            results,
            metric,
            extra,
            more=agreement,
            notes=withheld_notes,
        )
    else:
        text = "".join(f"> {n}\n\n" for n in withheld_notes) + reports.to_markdown(results, metric, extra)
    for note in withheld_notes if fmt == "csv" else []:  # the CSV itself stays a plain table
        click.echo(note, err=True)
    if output is None:
        if fmt == "html":  # the file's own bytes: escaping for the terminal would corrupt it
            sys.stdout.write(text)
        else:
            click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    click.echo(f"report written to {output}", err=True)


def register(cli: click.Group) -> None:
    cli.add_command(score_cmd)
    cli.add_command(judge_cmd)
    cli.add_command(report_cmd)
