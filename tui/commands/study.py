"""Agreement study exports."""

from __future__ import annotations

from pathlib import Path

from tui.commands import _click as click
from tui.context import AppContext, pass_ctx


@click.group("study")
def study_group() -> None:
    """Agreement study exports."""


@study_group.command("export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "md"]), default="md", show_default=True)
@click.option(
    "--shape",
    type=click.Choice(["atp", "isg", "all"]),
    default="all",
    show_default=True,
    help="ATP-Bench §6 agreement rates (+ Table 8b), ISG-Bench Table 3, or both (md only).",
)
@pass_ctx
def study_export(app: AppContext, path: Path, fmt: str, shape: str) -> None:
    """Write the agreement study tables to PATH."""
    from annotation.review import scales as scaling
    from evaluation.agreement.study import build_study, render_csv, render_markdown
    from store import read_only, session_scope
    from tui.blind_view import scope_for

    if fmt == "csv" and shape == "all":
        raise click.UsageError("a CSV holds one table: add --shape atp or --shape isg")
    scaling.store_builtin_scales_before_reading(app.engine, app.actor)
    with session_scope(read_only(app.engine)) as s:
        scope = scope_for(s, app.viewer)
        if scope.active:  # the study tables hold every rater's values: not for someone still rating blind
            raise click.ClickException(
                f"{app.viewer} still has {len(scope.targets)} target(s) to rate blind; the "
                f"study export shows every rating — rate them first, or export as someone else"
            )
        study = build_study(s)
    text = render_markdown(study, shape) if fmt == "md" else render_csv(study, shape)
    path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {path} ({len(study.endorsement)} agreement row(s), {len(study.comparison)} comparison row(s))")


def register(cli: click.Group) -> None:
    cli.add_command(study_group)
