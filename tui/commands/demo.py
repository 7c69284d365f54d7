"""``chainmark demo``: build the demo project (idempotently), optionally open the TUI on it."""

from __future__ import annotations

from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx


@click.command("demo")
@click.option("--open", "open_tui", is_flag=True, help="Open the TUI on the database afterwards.")
@json_option
@pass_ctx
def demo_cmd(app: AppContext, open_tui: bool, as_json: bool) -> None:
    """Build the demo project: one small benchmark for each benchmark plugin that brings a demo."""
    from annotation.demo import build_demo
    from store import session_scope

    if as_json and open_tui:
        raise click.UsageError("--json and --open exclude each other (the TUI owns the terminal)")
    with session_scope(app.engine, app.actor or "demo") as s:
        report = build_demo(s, app.blobs)
        rubrics = _store_demo_rubrics(s)
    if as_json:
        emit_json(
            {
                "created": report.created,
                "existing": report.existing,
                "rubrics": rubrics,
                "database": app.engine.url.render_as_string(hide_password=True),
            }
        )
        return
    for name, n in report.created.items():
        kept = report.existing.get(name, 0)
        click.echo(f"{name}: {n} task(s) created" + (f", {kept} already there" if kept else ""))
    for name, version in rubrics.items():
        click.echo(f"{name}: judge rubric v{version} stored")
    click.echo(f"demo project ready in {app.url}")
    if open_tui:
        from tui.launch import open_tui as launch

        launch(app)


def _store_demo_rubrics(session) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Store each demo plugin's authored rubric as its demo benchmark's rubric (once: saving the same text
    again adds nothing); the benchmarks whose rubric was stored now, with its version."""
    from annotation.demo.build import demo_name, demo_plugins
    from evaluation.judges.rubrics import add_rubric
    from store.plugins import resource_path

    stored = {}
    for plugin in demo_plugins():
        if plugin.demo_rubric:
            text = resource_path(plugin.demo_rubric).read_text(encoding="utf-8")
            template, new = add_rubric(session, demo_name(plugin), text, author="demo")
            if new:
                stored[demo_name(plugin)] = template.version
    return stored


def register(cli: click.Group) -> None:
    cli.add_command(demo_cmd)
