"""``chainmark init``: create or upgrade the database schema."""

from __future__ import annotations

from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx


@click.command("init")
@json_option
@pass_ctx
def init_cmd(app: AppContext, as_json: bool) -> None:
    """Create the database or upgrade it to the newest schema."""
    from store import make_engine
    from store.migrate import current_revision, head_revision, upgrade

    engine = make_engine(app.url)
    before = current_revision(engine)
    after = upgrade(engine)
    if as_json:
        emit_json(
            {
                "database": engine.url.render_as_string(hide_password=True),
                "before": before,
                "after": after,
                "head": head_revision(engine),
            }
        )
    elif before == after:
        click.echo(f"{app.url}: already at schema {after}")
    else:
        click.echo(f"{app.url}: schema {before or 'empty'} → {after} (head {head_revision(engine)})")


def register(cli: click.Group) -> None:
    cli.add_command(init_cmd)
