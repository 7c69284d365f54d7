"""Pairwise preferences from the command line: hand out pairs of runs, judge them blind (A / B / tie),
and read back the Bradley–Terry leaderboard and the reviewers' agreement.

Writes go through ``annotation.review.preferences``; the leaderboard and the statistics come from
``evaluation.agreement.preferences`` (the same report ``chainmark agreement`` prints for ratings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING


from annotation.vocab import PREFERENCE_CHOICES
from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx, table

if TYPE_CHECKING:
    from sqlmodel import Session


def _who(app: AppContext, annotator: str | None) -> str:
    who = annotator or app.actor
    if not who:
        raise click.UsageError("say who is judging: --as-annotator NAME (or chainmark --as NAME)")
    return who


@click.group("prefs")
def prefs_group() -> None:
    """Pairwise preferences: blind A/B/tie judgements of two runs, Bradley–Terry leaderboard, agreement."""


@prefs_group.command("assign")
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@click.option("--annotators", required=True, help="Comma-separated annotator names.")
@click.option("--overlap", type=int, default=1, show_default=True, help="People per item.")
@click.option("--tasks", help="Only these task ids (default: every task both runs answered).")
@json_option
@pass_ctx
def prefs_assign(
    app: AppContext, run_a: int, run_b: int, annotators: str, overlap: int, tasks: str | None, as_json: bool
) -> None:
    """Hand out every task both runs answered as an A/B item, OVERLAP people each, balancing the load."""
    from annotation.review import preferences as prefs
    from store import session_scope
    from tui.commands._review_common import _split

    only = [int(t) for t in _split(tasks) or []] if tasks else None
    with session_scope(app.engine, app.actor) as s:
        shared, made = prefs.assign_pairs(s, run_a, run_b, _split(annotators) or [], overlap, tasks=only)
        made_ids = [a.id for a in made]
    if as_json:
        emit_json({"runs": sorted((run_a, run_b)), "tasks": shared, "items": made_ids})
    else:
        click.echo(f"{len(made_ids)} new preference item(s) for {len(shared)} task(s)")


@prefs_group.command("queue")
@click.argument("annotator", required=False)
@click.option("--all", "show_all", is_flag=True, help="Include judged items.")
@json_option
@pass_ctx
def prefs_queue(app: AppContext, annotator: str | None, show_all: bool, as_json: bool) -> None:
    """ANNOTATOR's preference items (open ones by default); runs are not named (blind)."""
    from annotation.review import preferences as prefs
    from store import read_only, session_scope

    who = _who(app, annotator)
    with session_scope(read_only(app.engine)) as s:
        items = prefs.queue(s, who, status=None if show_all else "open")
    if as_json:
        emit_json([i.to_dict() for i in items])
        return
    click.echo(table([[i.assignment_id, i.task_id, i.status] for i in items], ["item", "task", "status"]))


@prefs_group.command("show")
@click.argument("item", type=int)
@click.option("--as-annotator", "annotator", help="Who is judging (default: --as).")
@json_option
@pass_ctx
def prefs_show(app: AppContext, item: int, annotator: str | None, as_json: bool) -> None:
    """What the judge of ITEM sees: the task and the two answers as A and B, nothing that names a run."""
    from annotation.review import preferences as prefs
    from store import read_only, session_scope
    from tui.widgets.review.event_text import event_summary

    who = _who(app, annotator)
    with session_scope(read_only(app.engine)) as s:
        view = prefs.pair_view(s, who, item)
    if as_json:
        emit_json(view.to_dict())
        return
    click.echo(f"item {item} (task {view.task['id']}) — {'judged ' + view.own_choice if view.own_choice else 'open'}")
    click.echo(view.task["query"])
    for side in view.sides:
        click.echo(
            f"\n{side.label}: {side.final_answer if side.final_answer is not None else '(no answer)'}"
            + ("" if side.status == "done" else f"  [{side.status}]")
        )
        for e in side.events:
            click.echo(f"  {e['ordinal']}. {event_summary(e['kind'], e['payload'], e['failed'], limit=160)}")
    if view.own_reason:
        click.echo(f"\nreason: {view.own_reason}")


@prefs_group.command("add")
@click.argument("item", type=int)
@click.argument("choice", type=click.Choice(PREFERENCE_CHOICES))
@click.option("--as-annotator", "annotator", help="Who is judging (default: --as).")
@click.option("--reason", help="Why, in a few words.")
@json_option
@pass_ctx
def prefs_add(
    app: AppContext, item: int, choice: str, annotator: str | None, reason: str | None, as_json: bool
) -> None:
    """Judge ITEM: a (the answer shown as A is better), b, or tie; judging again replaces it."""
    from annotation.review import preferences as prefs
    from store import session_scope

    who = _who(app, annotator)
    with session_scope(app.engine, app.actor) as s:
        row = prefs.record(s, who, item, choice, reason)
        row_id, revision = row.id, row.revision
    if as_json:
        emit_json({"id": row_id, "item": item, "annotator": who, "choice": choice, "revision": revision})
    else:
        click.echo(
            f"preference {row_id}: {who} judged item {item} {choice}"
            + (f" (revision {revision})" if revision > 1 else "")
        )


@prefs_group.command("withdraw")
@click.argument("item", type=int)
@click.option("--as-annotator", "annotator", help="Whose judgement (default: --as).")
@json_option
@pass_ctx
def prefs_withdraw(app: AppContext, item: int, annotator: str | None, as_json: bool) -> None:
    """Take back a judgement of ITEM and reopen it (the audit trail keeps it)."""
    from annotation.review import preferences as prefs
    from store import session_scope

    who = _who(app, annotator)
    with session_scope(app.engine, app.actor) as s:
        prefs.withdraw(s, who, item)
    if as_json:
        emit_json({"item": item, "annotator": who, "status": "open"})
    else:
        click.echo(f"item {item} reopened for {who}")


_BENCH = click.option("--bench", "bench", help="Only judgements between runs of this benchmark.")
_RESAMPLES = click.option(
    "--bootstrap",
    "resamples",
    type=int,
    default=1000,
    show_default=True,
    help="Bootstrap resamples for the 95% CIs (0: none).",
)
_SEED = click.option("--seed", type=int, default=0, show_default=True)


def _bench_check(s: Session, bench: str | None) -> None:
    if bench is not None:
        from sqlmodel import select

        from store.models import Benchmark

        if s.exec(select(Benchmark.id).where(Benchmark.name == bench)).first() is None:
            raise click.ClickException(f"no benchmark named {bench!r}")


@prefs_group.command("leaderboard")
@_BENCH
@_RESAMPLES
@_SEED
@json_option
@pass_ctx
def prefs_leaderboard(app: AppContext, bench: str | None, resamples: int, seed: int, as_json: bool) -> None:
    """Bradley–Terry scores (Elo-like, ties = half wins) with bootstrap CIs, comparisons and win rate per model."""
    from evaluation.agreement.preferences import preference_leaderboard
    from store import read_only, session_scope
    from tui.blind_view import scope_at

    with session_scope(read_only(app.engine)) as s:
        _bench_check(s, bench)
        hidden = scope_at(app, s).leaderboard_note()
        board = None if hidden else preference_leaderboard(s, bench=bench, resamples=resamples, seed=seed)
    if board is None and as_json:  # blind mode: the viewer still has pairs to judge
        emit_json({"hidden": hidden, "standings": []})
        return
    if board is None:
        click.echo(hidden)
        return
    if as_json:
        emit_json(board.to_dict())
        return
    if not board.standings:
        click.echo("no preferences between different models yet")
        return
    headers, rows = board.table()
    click.echo(table([["–" if c is None else c for c in row] for row in rows], headers))
    click.echo(
        f"{board.judgements} judgement(s); Bradley–Terry, ties count half; 95% CI from {resamples} "
        f"bootstrap resamples (seed {seed})"
    )
    if board.decisive:
        click.echo(
            f"position: the answer shown as A won {board.shown_first_won} of {board.decisive} decisive "
            f"judgement(s) ({board.shown_first_won / board.decisive:.0%})"
        )
    for note in board.notes:
        click.echo(f"note: {note}")


@prefs_group.command("agreement")
@_BENCH
@_RESAMPLES
@_SEED
@json_option
@pass_ctx
def prefs_agreement(app: AppContext, bench: str | None, resamples: int, seed: int, as_json: bool) -> None:
    """Agreement between people on the same pairs: percent agreement, Fleiss' κ, α, Cohen's κ per pair."""
    from evaluation.agreement.preferences import preference_matrix, judgements
    from evaluation.agreement.summary import agreement_report
    from store import read_only, session_scope
    from tui.blind_view import scope_for, visible_matrices
    from tui.commands.agreement import _print_report

    with session_scope(read_only(app.engine)) as s:
        _bench_check(s, bench)
        matrix = preference_matrix(judgements(s, bench=bench))
        matrices, _ = visible_matrices(s, scope_for(s, app.viewer), [matrix])
        report = agreement_report(matrices[0], resamples=resamples, seed=seed).to_dict()
    if as_json:
        emit_json(report)
        return
    if not report["units"]:
        click.echo("no preferences to compare yet")
        return
    _print_report(report)


def register(cli: click.Group) -> None:
    cli.add_command(prefs_group)
