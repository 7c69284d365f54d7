"""``chainmark serve``: the TUI in a browser through textual-serve (one app process per tab).

Each browser tab runs ``python -m tui.cli`` with the same database, as the user whose token opened it.
Without ``--user`` there is one token, for the acting user (``--as``); with ``--user alice --user bob``
each gets a URL of their own and is audited under their own name. The server listens on 127.0.0.1
unless ``--host`` says otherwise, and accepts websockets only from the page's own origin
(``tui.serve_guard``). The terminal-graphics protocols (kitty, Sixel) do not reach a browser, so served
apps use half-cell images.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import TYPE_CHECKING

from tui.commands import _click as click
from tui.context import AppContext, pass_ctx

if TYPE_CHECKING:
    from tui.serve_guard import Login


def serve_command(app: AppContext, user: str | None = None) -> str:
    """The shell command each browser session runs (the database URL is made absolute first)."""
    args = [sys.executable, "-m", "tui.cli", "--db", app.url]
    actor = user or app.actor
    if actor:
        args += ["--as", actor]
    return shlex.join(args)


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on (anything but loopback lets others on the network try the tokens).",
)
@click.option("--port", "-p", type=int, default=8000, show_default=True)
@click.option(
    "--public-url",
    default=None,
    help="URL the browser reaches the server at (behind a proxy); websockets must come from its origin.",
)
@click.option(
    "--user",
    "users",
    multiple=True,
    metavar="NAME",
    help="Give NAME a URL of their own; their sessions run as NAME. Repeat for more users.",
)
@click.option(
    "--accounts",
    is_flag=True,
    help="Let in every annotator with a login token (`chainmark annotators token NAME`), as themselves; "
    "read again every second, so a revoked token ends its open sessions.",
)
@pass_ctx
def serve_cmd(
    app: AppContext, host: str, port: int, public_url: str | None, users: tuple[str, ...], accounts: bool
) -> None:
    """Serve the TUI to a web browser: one secret URL per user, printed once (or stored accounts' tokens)."""
    from tui.serve_guard import GuardedServer, Login, new_token

    _ = app.engine  # create or check the schema now, so a bad database fails here and not in every tab
    os.environ["CHAINMARK_IMAGES"] = "halfcell"
    logins = account_logins(app) if accounts else []
    if accounts and not logins:
        raise click.ClickException(
            "no annotator has a serve login yet; give one with `chainmark annotators token NAME`"
        )
    if users or not accounts:
        names = list(dict.fromkeys(users)) or [app.actor or ""]
        logins += [
            Login.with_token(name or "(default)", new_token(), serve_command(app, name or None)) for name in names
        ]
    server = GuardedServer(
        logins,
        accounts=(lambda: account_logins(app)) if accounts else None,
        host=host,
        port=port,
        title="chainmark",
        public_url=public_url,
    )
    click.echo(f"chainmark serving on {server.public_url}  (ctrl+c stops); open:", err=True)
    for login in logins:
        click.echo(f"  {login.user}: {server.url_for(login)}", err=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(
            f"warning: listening on {host}; anyone who can reach it and learns a URL can use chainmark "
            f"as that user (put it behind TLS)",
            err=True,
        )
    server.serve()


def account_logins(app: AppContext) -> list[Login]:
    """A login per annotator with a stored serve token (checked by its hash; sessions run as them)."""
    from annotation.review.annotators import serve_accounts
    from store import read_only, session_scope
    from tui.serve_guard import Login

    with session_scope(read_only(app.engine)) as s:
        return [Login(name, digest, serve_command(app, name)) for name, digest in serve_accounts(s)]


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
