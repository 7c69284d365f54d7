"""Ratings: typed or imported, and listed (stale ones too)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui.commands import _click as click
from tui.commands._review_common import KIND
from tui.context import AppContext, emit_json, json_option, pass_ctx, table

if TYPE_CHECKING:
    from annotation.review import ratings as rating


@click.command("rate")
@click.option("--as-annotator", "annotator", help="Who is rating.")
@click.option("--scale")
@click.option("--target-kind", type=KIND)
@click.option("--target-id", type=int)
@click.option("--part", default="", help="Sub-item of the target, e.g. block:3.")
@click.option("--value", help="A value on the scale; for dimensional scales 'dim=v,…' or a JSON object.")
@click.option("--comment")
@click.option(
    "--import",
    "import_path",
    type=click.Path(path_type=Path),
    help="Import ratings from a CSV (annotator, scale, target_kind, target_id, [target_part], value, "
    "[comment], [blind]); all rows or none.",
)
@click.option("--create-annotators", is_flag=True, help="With --import: add unknown annotators.")
@json_option
@pass_ctx
def rate_cmd(
    app: AppContext,
    annotator: str | None,
    scale: str | None,
    target_kind: str | None,
    target_id: int | None,
    part: str,
    value: str | None,
    comment: str | None,
    import_path: Path | None,
    create_annotators: bool,
    as_json: bool,
) -> None:
    """Rate one target, or import existing labels from a CSV."""
    from annotation.review import ratings as rating
    from annotation.review.targets import Target
    from store import session_scope

    if import_path is not None:
        with session_scope(app.engine, app.actor) as s:
            rows = rating.import_ratings_csv(s, import_path, create_annotators=create_annotators)
            imported = [r.id for r in rows]
        if as_json:
            emit_json({"imported": len(imported), "ratings": imported, "path": str(import_path)})
        else:
            click.echo(f"imported {len(imported)} rating(s) from {import_path}")
        return
    missing = [
        n
        for n, v in (
            ("--as-annotator", annotator),
            ("--scale", scale),
            ("--target-kind", target_kind),
            ("--target-id", target_id),
            ("--value", value),
        )
        if v is None
    ]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or use --import CSV)")
    with session_scope(app.engine, app.actor) as s:
        r = rating.rate(
            s, annotator or "", scale or "", Target(target_kind or "", target_id or 0, part), value, comment=comment
        )
        if as_json:
            emit_json(
                {
                    "id": r.id,
                    "annotator": annotator,
                    "scale": r.scale,
                    "target_kind": r.target_kind,
                    "target_id": r.target_id,
                    "target_part": r.target_part,
                    "value": r.value,
                    "task_revision": r.task_revision,
                }
            )
            return
        click.echo(
            f"rating {r.id}: {annotator} rated {Target(r.target_kind, r.target_id, r.target_part).label()} "
            f"{rating.value_text(r.value)} on {r.scale} (task revision {r.task_revision})"
        )


@click.group("ratings")
def ratings_group() -> None:
    """List ratings and find stale ones."""


@ratings_group.command("list")
@click.option("--scale")
@click.option("--annotator")
@click.option("--stale", "only_stale", is_flag=True, help="Only ratings whose task was edited after rating.")
@click.option("--history", is_flag=True, help="Include superseded ratings.")
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--csv",
    "as_csv",
    is_flag=True,
    help="Raw long format for analysis: one row per rating and dimension, empty cells where none.",
)
@pass_ctx
def ratings_list(
    app: AppContext,
    scale: str | None,
    annotator: str | None,
    only_stale: bool,
    history: bool,
    as_json: bool,
    as_csv: bool,
) -> None:
    """Current ratings (newest per annotator, target and scale) with their stale flag."""
    from annotation.review import ratings as rating
    from store import read_only, session_scope
    from tui.blind_view import HIDDEN_NOTE, scope_for, visible_ratings

    with session_scope(read_only(app.engine)) as s:
        rows = rating.ratings(s, scale=scale, annotator=annotator, current_only=not history)
        rows, held_back = visible_ratings(s, scope_for(s, app.viewer), rows)
    if held_back and not as_json:
        click.echo(HIDDEN_NOTE.format(n=held_back, who=app.viewer).replace("target(s)", "rating(s)"), err=True)
    if only_stale:
        rows = [r for r in rows if r.stale]
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if as_csv:
        click.echo(ratings_csv(rows), nl=False)
        return
    click.echo(
        table(
            [
                [
                    r.id,
                    r.annotator,
                    r.target.label(),
                    r.scale,
                    rating.value_text(r.value),
                    f"{r.task_revision}/{r.current_revision}" if r.task_revision is not None else "",
                    "stale" if r.stale else ("" if r.current else "superseded"),
                ]
                for r in rows
            ],
            ["id", "annotator", "target", "scale", "value", "rev", "state"],
        )
    )


RATINGS_CSV_COLUMNS = [
    "rating_id",
    "annotator",
    "target_kind",
    "target_id",
    "target_part",
    "task_id",
    "task_revision",
    "scale",
    "dimension",
    "value",
    "comment",
    "blind",
    "stale",
    "current",
    "created_at",
]


def ratings_csv(rows: list[rating.RatingInfo]) -> str:
    """One row per rating, and per dimension of a multi-dimension rating; missing values are empty cells."""
    import csv
    import io

    def cell(v: object) -> object:
        return "" if v is None else ("true" if v is True else "false" if v is False else v)

    buf = io.StringIO()
    out = csv.writer(buf)
    out.writerow(RATINGS_CSV_COLUMNS)
    for r in rows:
        values = r.value.items() if isinstance(r.value, dict) else [(None, r.value)]
        for dimension, value in values:
            out.writerow(
                [
                    cell(v)
                    for v in (
                        r.id,
                        r.annotator,
                        r.target.kind,
                        r.target.id,
                        r.target.part,
                        r.task_id,
                        r.task_revision,
                        r.scale,
                        dimension,
                        value,
                        r.comment,
                        r.blind,
                        r.stale,
                        r.current,
                        r.created_at,
                    )
                ]
            )
    return buf.getvalue()


def register(cli: click.Group) -> None:
    for command in (rate_cmd, ratings_group):
        cli.add_command(command)
