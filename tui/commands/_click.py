"""``click`` as the command modules use it, with one change: ``echo`` shows control characters in what
it prints as escapes (``tui.safe_text.visible``, newlines kept), because command output carries data
(queries, answers, names, errors) and the terminal would act on them. Two additions serve choices that
come from the benchmark plugins: ``LazyChoice`` and the ``FormatsHelp`` command class.

Every module in ``tui/commands`` imports ``from tui.commands import _click as click`` (a test checks), so a
new ``click.echo`` is safe without anyone remembering to. Output that must reach the terminal as written
(a progress line redrawn with ``\\r``) uses ``raw_echo`` and sanitises its own data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from click import *  # noqa: F401,F403  (the rest of click, unchanged)
from click import Choice, Command, Context, HelpFormatter
from click import echo as raw_echo

from tui.safe_text import visible


def echo(message: Any = None, file: Any = None, nl: bool = True, err: bool = False, color: bool | None = None) -> None:
    """``click.echo`` with control characters in ``message`` shown escaped (bytes are written as they are)."""
    if message is not None and not isinstance(message, (bytes, bytearray)):
        message = visible(message, keep_newlines=True)
    raw_echo(message, file=file, nl=nl, err=err, color=color)


class LazyChoice(Choice):
    """A ``click.Choice`` whose choices are asked for when first needed (parsing the value, printing
    the help), not when the command module is imported: they come from the benchmark plugins, whose
    discovery a command that never reads this option should not pay for."""

    def __init__(self, choices: Callable[[], Iterable[str]], case_sensitive: bool = True) -> None:
        self._source = choices
        self._choices: tuple[str, ...] | None = None
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple[str, ...]:
        if self._choices is None:
            self._choices = tuple(self._source())
        return self._choices

    @choices.setter
    def choices(self, value: Iterable[str]) -> None:
        self._choices = tuple(value)


class FormatsHelp(Command):
    """A command whose help ends with the formats it takes, one line each, read from the benchmark
    plugins when the help is printed (``formats``: "dataset", "run" or "benchmark", as
    ``annotation.formats.registry.describe_formats``)."""

    def __init__(self, *args: Any, formats: str = "dataset", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.formats = formats

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        from annotation.formats.registry import describe_formats

        with formatter.section("Formats"):
            formatter.write_dl(describe_formats(self.formats))
        super().format_epilog(ctx, formatter)
