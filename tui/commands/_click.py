"""``click`` as the command modules use it, with one change: ``echo`` shows control characters in what
it prints as escapes (``tui.safe_text.visible``, newlines kept), because command output carries data
(queries, answers, names, errors) and the terminal would act on them.

Every module in ``tui/commands`` imports ``from tui.commands import _click as click`` (a test checks), so a
new ``click.echo`` is safe without anyone remembering to. Output that must reach the terminal as written
(a progress line redrawn with ``\\r``) uses ``raw_echo`` and sanitises its own data.
"""

from __future__ import annotations

from typing import Any

from click import *  # noqa: F401,F403  (the rest of click, unchanged)
from click import echo as raw_echo

from tui.safe_text import visible


def echo(message: Any = None, file: Any = None, nl: bool = True, err: bool = False, color: bool | None = None) -> None:
    """``click.echo`` with control characters in ``message`` shown escaped (bytes are written as they are)."""
    if message is not None and not isinstance(message, (bytes, bytearray)):
        message = visible(message, keep_newlines=True)
    raw_echo(message, file=file, nl=nl, err=err, color=color)
