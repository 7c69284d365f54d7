"""Ask the terminal what it can draw (Sixel, kitty graphics, cell size) in the background.

textual-image asks when it is imported, and must finish before Textual takes over the terminal.
The questions mostly wait for the terminal's answer (up to 0.1 s each, longer over SSH), so they
run in a thread while the main thread imports Textual and the app; ``wait`` joins before the app
starts. Without ``start`` the first import of ``tui.images`` simply asks in the foreground.
"""

from __future__ import annotations

import threading

_thread: threading.Thread | None = None


def _probe() -> None:
    # The renderables ask about Sixel and kitty graphics and need no Textual, so they load while the
    # main thread imports Textual; the widgets (which share Textual's modules) come after.
    import textual_image.renderable  # noqa: F401
    import tui.images  # noqa: F401


def start() -> None:
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_probe, name="terminal-probe", daemon=True)
        _thread.start()


def wait() -> None:
    if _thread is not None:
        _thread.join()
