"""Opening the TUI from any command (bare ``chainmark``, ``chainmark demo --open``).

Two things must happen before Textual is imported: the terminal is asked what it can draw (in a
thread, so the question overlaps the imports) and Textual's frame rate is set. Textual paints on a
timer; at its default 60 Hz a change waits up to 17 ms for the next frame, a third of the time a
filter keystroke may take; frames are drawn only when something changed, so 120 Hz costs nothing
at rest. ``TEXTUAL_FPS`` set by the user wins.
"""

from __future__ import annotations

import os

from tui.context import AppContext


def open_tui(ctx: AppContext) -> None:
    from tui import terminal_probe

    terminal_probe.start()
    os.environ.setdefault("TEXTUAL_FPS", "120")
    from tui.app import run_app

    run_app(ctx)
