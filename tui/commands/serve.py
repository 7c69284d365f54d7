"""``chainmark serve``: the TUI in a browser through textual-serve (one app process per tab).

Each browser tab runs ``python -m tui.cli`` with the same database and actor as this command. The
terminal-graphics protocols (kitty, Sixel) do not reach a browser, so served apps use half-cell
images.
"""

from __future__ import annotations

import os
import shlex
import sys

from tui.commands import _click as click
from tui.context import AppContext, pass_ctx


def serve_command(app: AppContext) -> str:
    """The shell command each browser session runs (the database URL is made absolute first)."""
    args = [sys.executable, "-m", "tui.cli", "--db", app.url]
    if app.actor:
        args += ["--as", app.actor]
    return shlex.join(args)


@click.command("serve")
@click.option("--host", default="localhost", show_default=True, help="Interface to listen on.")
@click.option("--port", "-p", type=int, default=8000, show_default=True)
@click.option("--public-url", default=None, help="URL the browser reaches the server at, behind a proxy.")
@pass_ctx
def serve_cmd(app: AppContext, host: str, port: int, public_url: str | None) -> None:
    """Serve the TUI to a web browser (textual-serve)."""
    from textual_serve.server import Server

    app.engine  # create or check the schema now, so a bad database fails here and not in every tab
    os.environ["CHAINMARK_IMAGES"] = "halfcell"
    click.echo(f"chainmark on http://{host}:{port}  (ctrl+c stops)", err=True)
    Server(serve_command(app), host=host, port=port, title="chainmark", public_url=public_url).serve()


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
