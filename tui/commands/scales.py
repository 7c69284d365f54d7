"""Rating scales: the values (and dimensions) raters choose from."""

from __future__ import annotations

from typing import Any

from annotation.vocab import SCALE_LEVELS
from tui.commands import _click as click
from tui.commands._review_common import _split
from tui.context import AppContext, emit_json, json_option, pass_ctx, table


@click.group("scales")
def scales_group() -> None:
    """Rating scales (built-in and custom)."""


@scales_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def scales_list(app: AppContext, as_json: bool) -> None:
    """Every scale: level of measurement, values, dimensions."""
    from annotation.review import scales as scaling
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        rows = [sc.to_dict() for sc in scaling.list_scales(s)]
    if as_json:
        emit_json(rows)
        return
    click.echo(
        table(
            [[r["name"], r["level"], _short_values(r["values"]), ", ".join(r["dimensions"])] for r in rows],
            ["scale", "level", "values", "dimensions"],
        )
    )


def _short_values(values: list[Any]) -> str:
    if len(values) > 4 and all(isinstance(v, (int, float)) for v in values):
        return f"{min(values)}..{max(values)}"
    text = " | ".join(map(str, values))
    return text if len(text) <= 60 else text[:59] + "…"


@scales_group.command("add")
@click.argument("name")
@click.option("--level", type=click.Choice(SCALE_LEVELS), required=True)
@click.option("--values", "values", required=True, help="'a,b,c', '0..100' or a JSON array, in scale order.")
@click.option("--dimensions", help="Comma-separated dimension names (each rated on the values).")
@click.option("--rubric", help="What the values mean, shown to raters.")
@json_option
@pass_ctx
def scales_add(
    app: AppContext, name: str, level: str, values: str, dimensions: str | None, rubric: str | None, as_json: bool
) -> None:
    """Add a custom scale."""
    from annotation.review import scales as scaling
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
        sc = scaling.add_scale(s, name, level, scaling.parse_values(values), _split(dimensions), rubric)
    if as_json:
        emit_json(sc.to_dict())
    else:
        click.echo(f"scale {sc.name} ({sc.level}, {len(sc.values)} values)")


def register(cli: click.Group) -> None:
    cli.add_command(scales_group)
