"""Assignments: which annotators rate which targets, balanced over them."""

from __future__ import annotations


from tui.commands import _click as click
from tui.commands._review_common import KIND, _split
from tui.context import AppContext, emit_json, json_option, pass_ctx


@click.command("assign")
@click.option("--scale", required=True)
@click.option("--target-kind", type=KIND, required=True)
@click.option("--targets", help="Target ids, e.g. 3,4,7@block:2 (a part follows '@').")
@click.option("--run", "run_id", type=int, help="Every target of this kind in a run.")
@click.option("--annotators", required=True, help="Comma-separated annotator names.")
@click.option("--overlap", type=int, default=1, show_default=True, help="Raters per target.")
@click.option(
    "--blind/--open",
    default=True,
    show_default=True,
    help="Blind raters see no verdicts or other ratings until they have rated.",
)
@json_option
@pass_ctx
def assign_cmd(
    app: AppContext,
    scale: str,
    target_kind: str,
    targets: str | None,
    run_id: int | None,
    annotators: str,
    overlap: int,
    blind: bool,
    as_json: bool,
) -> None:
    """Give targets to annotators, OVERLAP of them per target, balancing the load."""
    from annotation.review import assignments as assigning
    from annotation.review.targets import Target, parse_target_ids, targets_of_run
    from store import session_scope

    if (targets is None) == (run_id is None):
        raise click.UsageError("give exactly one of --targets or --run")
    with session_scope(app.engine, app.actor) as s:
        if run_id is not None:
            chosen = targets_of_run(s, run_id, target_kind)
        else:
            chosen = [Target(target_kind, i, p) for i, p in parse_target_ids(targets or "")]
        made = assigning.assign(s, scale, chosen, _split(annotators) or [], overlap, blind=blind)
        made_ids = [a.id for a in made]
    if as_json:
        emit_json({"scale": scale, "targets": len(chosen), "assignments": made_ids})
    else:
        click.echo(f"{len(made_ids)} new assignment(s) for {len(chosen)} target(s) on {scale}")


def register(cli: click.Group) -> None:
    cli.add_command(assign_cmd)
