"""``chainmark demo``: build the demo project (idempotently), optionally open the TUI on it."""

from __future__ import annotations

from annotation.demo import build_demo
from store import session_scope
from tui.commands import _click as click
from tui.context import AppContext, pass_ctx


@click.command("demo")
@click.option("--open", "open_tui", is_flag=True, help="Open the TUI on the database afterwards.")
@pass_ctx
def demo_cmd(app: AppContext, open_tui: bool) -> None:
    """Build the demo project: one small benchmark in the style of each seed benchmark."""
    with session_scope(app.engine, app.actor or "demo") as s:
        report = build_demo(s, app.blobs)
    for name, n in report.created.items():
        kept = report.existing.get(name, 0)
        click.echo(f"{name}: {n} task(s) created" + (f", {kept} already there" if kept else ""))
    click.echo(f"demo project ready in {app.url}")
    if open_tui:
        from tui.launch import open_tui as launch

        launch(app)


def register(cli: click.Group) -> None:
    cli.add_command(demo_cmd)
