"""``chainmark init``: create or upgrade the database schema."""

from __future__ import annotations

from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx, schema_refused


@click.command("init")
@json_option
@pass_ctx
def init_cmd(app: AppContext, as_json: bool) -> None:
    """Create the database or upgrade it to the newest schema."""
    from store import make_engine
    from store.migrate import current_revision, head_revision, upgrade
    from store.schema_head import made_by_newer

    engine = make_engine(app.url)
    before = current_revision(engine)
    if before is not None and made_by_newer(before):
        raise schema_refused(before, head_revision(engine))
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
        return
    shown = engine.url.render_as_string(hide_password=True)
    if before == after:
        click.echo(f"{shown}: already at schema {after}")
    else:
        click.echo(f"{shown}: schema {before or 'empty'} → {after} (head {head_revision(engine)})")


def register(cli: click.Group) -> None:
    cli.add_command(init_cmd)
