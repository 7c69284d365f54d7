"""Adjudication: a reviewer's final value for a disputed target, and withdrawing one."""

from __future__ import annotations


from tui.commands import _click as click
from tui.commands._review_common import KIND
from tui.context import AppContext, emit_json, json_option, pass_ctx


@click.command("adjudicate")
@click.option("--reviewer", required=True)
@click.option("--target-kind", type=KIND, required=True)
@click.option("--target-id", type=int, required=True)
@click.option("--part", default="")
@click.option("--scale", required=True)
@click.option("--value", required=True)
@click.option("--rationale", required=True)
@json_option
@pass_ctx
def adjudicate_cmd(
    app: AppContext,
    reviewer: str,
    target_kind: str,
    target_id: int,
    part: str,
    scale: str,
    value: str,
    rationale: str,
    as_json: bool,
) -> None:
    """Record a reviewer's final value; the ratings and verdicts it overrides are kept and listed."""
    from annotation.review import adjudication as adj
    from annotation.review import ratings as rating
    from annotation.review import scales as scaling
    from annotation.review.targets import Target
    from evaluation.agreement.matrix import Unit
    from evaluation.agreement.matrix import verdict_values as matrix_verdict_values
    from store import session_scope

    target = Target(target_kind, target_id, part)
    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
        verdict_values = matrix_verdict_values(s, scale, Unit(target.kind, target.id, target.part))
        row = adj.adjudicate(s, reviewer, target, scale, value, rationale, verdict_values=verdict_values)
        o = row.overrides
        if as_json:
            emit_json(
                {
                    "id": row.id,
                    "reviewer": reviewer,
                    "target_kind": target.kind,
                    "target_id": target.id,
                    "target_part": target.part,
                    "scale": row.scale,
                    "final_value": row.final_value,
                    "overrides": o,
                }
            )
            return
        click.echo(
            f"adjudication {row.id}: {target.label()} = {rating.value_text(row.final_value)} on {row.scale}; "
            f"overrides ratings {o['ratings'] or '–'} and verdicts {o['verdicts'] or '–'}"
        )


@click.command("withdraw-adjudication")
@click.argument("adjudication_id", type=int)
@click.option("--reviewer", required=True)
@json_option
@pass_ctx
def withdraw_adjudication_cmd(app: AppContext, adjudication_id: int, reviewer: str, as_json: bool) -> None:
    """Take back an adjudication (audited; adjudicating the target again replaces it instead)."""
    from annotation.review import adjudication as adj
    from annotation.review.targets import Target
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        gone = adj.withdraw_adjudication(s, reviewer, adjudication_id)
    if as_json:
        emit_json({"withdrawn": gone})
        return
    click.echo(
        f"adjudication {adjudication_id} withdrawn ({Target(**gone['target']).label()} on {gone['scale']}); "
        "the audit trail keeps it"
    )


def register(cli: click.Group) -> None:
    for command in (adjudicate_cmd, withdraw_adjudication_cmd):
        cli.add_command(command)
