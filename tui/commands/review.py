"""``review``: a rater's queue, the blind rating view, the adjudications so far, and which items to
label next. The other human-review commands live one noun per module: annotators, scales,
assignments, ratings, agreement (and disagreements), adjudication, study.

These modules compose the two domain layers: ``annotation.review`` writes people's work,
``evaluation.agreement`` reads it back with the judges' verdicts and does the statistics.
"""

from __future__ import annotations

import json

from tui.commands import _click as click
from tui.commands._review_common import KIND
from tui.commands.estimate import plan_cmd
from tui.context import AppContext, emit_json, pass_ctx, table
from tui.safe_text import json_safe


@click.group("review")
def review_group() -> None:
    """A rater's queue and what they may see (blind mode), and which items to label next."""


review_group.add_command(plan_cmd)  # defined with the estimates it serves (tui/commands/estimate.py)


@review_group.command("queue")
@click.argument("annotator")
@click.option("--all", "show_all", is_flag=True, help="Include done assignments.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def review_queue(app: AppContext, annotator: str, show_all: bool, as_json: bool) -> None:
    """An annotator's assignments (open ones by default)."""
    from annotation.review import annotators as people
    from annotation.review import assignments as assigning
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        people.get_annotator(s, annotator)
        rows = assigning.assignments(s, annotator=annotator, status=None if show_all else "open")
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    click.echo(
        table(
            [[r.id, r.target.label(), r.scale, "blind" if r.blind else "open", r.status] for r in rows],
            ["id", "target", "scale", "mode", "status"],
        )
    )


@review_group.command("view")
@click.option("--as-annotator", "annotator", required=True)
@click.option("--scale", required=True)
@click.option("--target-kind", type=KIND, required=True)
@click.option("--target-id", type=int, required=True)
@click.option("--part", default="")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def review_view(
    app: AppContext, annotator: str, scale: str, target_kind: str, target_id: int, part: str, as_json: bool
) -> None:
    """What ANNOTATOR may see while rating a target (blind: no verdicts or others' ratings before rating)."""
    from annotation.review import ratings as rating
    from annotation.review.blind import rating_view
    from annotation.review.targets import Target
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        view = rating_view(s, annotator, Target(target_kind, target_id, part), scale).to_dict()
    if as_json:
        emit_json(view)
        return
    click.echo(
        f"{Target(target_kind, target_id, part).label()} on {scale}"
        f" — {'blind' if view['blind'] else 'open'}, {'rated' if view['rated'] else 'not rated yet'}"
    )
    click.echo(json_safe(json.dumps(view["content"], indent=2, ensure_ascii=False, default=str)))
    if view["hidden"]:
        click.echo(f"hidden until you rate: {', '.join(view['hidden'])}")
    for v in view["verdicts"]:
        click.echo(f"verdict {v['id']} by {v['judge']}: {v['label'] if v['label'] is not None else v['score']}")
    for r in view["other_ratings"]:
        click.echo(f"rating {r['id']} by {r['annotator']}: {rating.value_text(r['value'])}")


@review_group.command("adjudications")
@click.option("--scale")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def adjudications_list(app: AppContext, scale: str | None, as_json: bool) -> None:
    """Adjudications with what they overrode."""
    from annotation.review import adjudication as adj
    from annotation.review import ratings as rating
    from store import read_only, session_scope
    from tui.blind_view import HIDDEN_NOTE, scope_for, visible_units

    with session_scope(read_only(app.engine)) as s:
        rows = adj.adjudications(s, scale=scale)
        rows, held_back = visible_units(s, scope_for(s, app.viewer), rows, lambda r: r.target)
    if held_back and not as_json:
        click.echo(HIDDEN_NOTE.format(n=held_back, who=app.viewer), err=True)
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    click.echo(
        table(
            [
                [
                    r.id,
                    r.reviewer,
                    r.target.label(),
                    r.scale,
                    rating.value_text(r.final_value),
                    ",".join(map(str, r.overrides.get("ratings", []))),
                    ",".join(map(str, r.overrides.get("verdicts", []))),
                    r.rationale,
                ]
                for r in rows
            ],
            ["id", "reviewer", "target", "scale", "final", "overrode ratings", "overrode verdicts", "rationale"],
        )
    )


def register(cli: click.Group) -> None:
    cli.add_command(review_group)
