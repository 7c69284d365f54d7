"""The ``chainmark`` command: headless subcommands, and the TUI when called bare.

Subcommands live one group per module in ``tui/commands/``; each module exposes ``register(cli)``
and is discovered here, so adding a capability never means editing this file. Discovery waits until
a subcommand (or the help) is asked for, and Textual is imported only when the TUI is opened: bare
``chainmark`` pays for neither the command modules nor their imports (the harness, the scorers).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import click

from tui import commands
from tui.context import AppContext
from tui.safe_text import visible


class ChainmarkGroup(click.Group):
    """Finds its subcommands on first need, and turns domain errors (bad input, refused edits) into
    one clean line instead of a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        _register_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        _register_commands()
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # its message may quote data: shown with controls escaped
            exc.message = visible(exc.message, keep_newlines=True)
            raise
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except (ValueError, LookupError, PermissionError, FileNotFoundError) as exc:
            raise click.ClickException(visible(str(exc), keep_newlines=True)) from exc


@click.group(cls=ChainmarkGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", envvar="CHAINMARK_DB", default=None, metavar="URL",
              help="Database: a SQLite path or a URL (postgresql+psycopg://…). Default ./chainmark.db.")
@click.option("--as", "actor", envvar="CHAINMARK_USER", default=None, metavar="NAME",
              help="Who is acting (recorded in the audit trail). Default: $CHAINMARK_USER or login name.")
@click.pass_context
def cli(ctx: click.Context, db: str | None, actor: str | None) -> None:
    """chainmark: build, run and judge benchmarks of agentic multimodal models."""
    ctx.obj = AppContext(db=db, actor=actor)
    if ctx.invoked_subcommand is None:
        from tui.launch import open_tui

        open_tui(ctx.obj)


_registered = False


def _register_commands() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(cli)


def main() -> None:
    cli(prog_name="chainmark")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
