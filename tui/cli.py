"""The ``chainmark`` command: headless subcommands, and the TUI when called bare.

Subcommands live one group per module in ``tui/commands/``; each module exposes ``register(cli)``
and is discovered here, so adding a capability never means editing this file. A subcommand imports
only the module that defines it (found by ``tui.command_index``, which reads the sources), the
command list in ``--help`` imports none, and Textual is imported only when the TUI is opened: bare
``chainmark`` pays for neither the command modules nor their imports (the harness, the scorers).
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import pkgutil
import sys
from pathlib import Path

import click

from tui import commands
from tui.command_index import CommandIndex, cached_index
from tui.context import AppContext
from tui.errors import ENV_TRACEBACK
from tui.safe_text import visible

log = logging.getLogger("chainmark")


class ChainmarkGroup(click.Group):
    """Finds its subcommands on first need, and turns domain errors (bad input, refused edits) into
    one clean line instead of a traceback."""

    _listing = False  # while formatting the help: commands not loaded yet are stubs from the index

    def list_commands(self, ctx: click.Context) -> list[str]:
        index = command_index()
        for module in index.opaque_modules:
            _load_module(module)
        return sorted(set(index.commands) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            entry = command_index().commands.get(cmd_name)  # cached: see command_index.cached_index
            if entry is not None and self._listing:
                return click.Command(cmd_name, help=entry.help)
            if entry is not None:
                _load_module(entry.module)
            if cmd_name not in self.commands:  # not indexed (or misread): look everywhere
                _register_commands()
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # its message may quote data: shown with controls escaped
            exc.message = visible(exc.message, keep_newlines=True)
            raise
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:  # `chainmark … | head`: the reader has what it wanted; stop quietly
            _silence_stdout()
            raise click.exceptions.Exit(141) from None  # 128 + SIGPIPE, as other command-line tools
        except (ValueError, LookupError, PermissionError, FileNotFoundError) as exc:
            if isinstance(exc, UnicodeError):  # text a database cannot store: say so, and log where it came from
                raise click.ClickException(visible(_one_line(ctx, exc), keep_newlines=True)) from exc
            log.debug("refused: %s", exc, exc_info=True)
            raise click.ClickException(visible(str(exc), keep_newlines=True)) from exc
        except Exception as exc:  # disk full, read-only, locked, refused values … and bugs: one line, logged
            # the traceback goes to the error log (message_for) and, with --verbose, the debug log: never the terminal
            log.debug("chainmark %s failed", ctx.invoked_subcommand or "", exc_info=True)
            if _traceback_setting():
                raise
            raise click.ClickException(visible(_one_line(ctx, exc), keep_newlines=True)) from exc


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _traceback_setting() -> bool:
    """``traceback = true`` in a settings file (a broken settings file must not hide the error itself)."""
    try:
        from store.settings import current

        return current().traceback
    except Exception:
        return bool(os.environ.get(ENV_TRACEBACK))


def _one_line(ctx: click.Context, exc: BaseException) -> str:
    from store.db import busy_timeout_ms
    from tui.errors import message_for

    url, timeout = None, None
    try:
        url = ctx.obj.url if isinstance(ctx.obj, AppContext) else None
        timeout = busy_timeout_ms() / 1000
    except Exception:  # noqa: BLE001,S110  (the URL or the setting is what failed: log to the temp folder)
        pass
    return message_for(exc, url, timeout)


@click.group(cls=ChainmarkGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    envvar="CHAINMARK_DB",
    default=None,
    metavar="URL",
    help="Database: a SQLite path or a URL (postgresql+psycopg://…). Default ./chainmark.db.",
)
@click.option(
    "--as",
    "actor",
    envvar="CHAINMARK_USER",
    default=None,
    metavar="NAME",
    help="Who is acting (recorded in the audit trail). Default: $CHAINMARK_USER or login name.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Write a debug log beside the database (chainmark.db.log; chainmark.log for PostgreSQL).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None, actor: str | None, verbose: bool) -> None:
    """chainmark: build, run and judge benchmarks of agentic multimodal models."""
    ctx.obj = AppContext(db=db, actor=actor)
    ctx.call_on_close(ctx.obj.close)
    if verbose:
        from tui import logfile

        handler = logfile.start(ctx.obj.url)
        ctx.call_on_close(lambda: logfile.stop(handler))
        log.info(
            "chainmark %s (database %s, acting as %s)",
            " ".join(sys.argv[1:]),
            _safe_url(ctx.obj.url),
            actor or "default",
        )
    if ctx.invoked_subcommand is None:
        from tui.launch import open_tui

        open_tui(ctx.obj)


_loaded: set[str] = set()


def _safe_url(url: str) -> str:
    """The URL for the log, without a password."""
    if "@" not in url:
        return url
    import sqlalchemy as sa

    return sa.engine.make_url(url).render_as_string(hide_password=True)


@functools.cache
def command_index() -> CommandIndex:
    return cached_index(Path(commands.__file__).parent, commands.__name__)


def _load_module(name: str) -> None:
    """Import one command module and let it register its commands (once)."""
    if name in _loaded:
        return
    _loaded.add(name)
    register = getattr(importlib.import_module(name), "register", None)
    if register is not None:
        register(cli)


def _register_commands() -> None:
    """Every command module (the slow path: an unknown command name)."""
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            _load_module(f"{commands.__name__}.{info.name}")


def main() -> None:
    try:
        cli(prog_name="chainmark")
    finally:
        _no_final_collection()


def _no_final_collection() -> None:
    """The command is done: its transactions are committed and its database connections closed (the
    context's ``close``); the interpreter still joins its threads, runs every ``atexit`` handler and
    flushes stdout, stderr and the log on the way out. What it would also do is a last garbage
    collection over every object the imports made (openai's, pydantic's and SQLAlchemy's classes:
    hundreds of thousands), 0.5-0.8 s of a ``chainmark run`` on a busy machine, only to hand memory
    back that the exit hands back anyway. Frozen objects are left out of it; so objects still caught
    in reference cycles are not finalised at exit, which nothing here relies on (Python does not
    promise it either): what must reach the disk is written and closed before this. Objects a command
    kept for the exit (``tui.exit_keep``) are frozen with the rest, and so not freed one by one either."""
    from tui.exit_keep import leave_to_exit

    leave_to_exit()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
