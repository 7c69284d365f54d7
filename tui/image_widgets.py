"""The one module that imports textual-image's widgets, after the first frame and without a probe.

textual-image asks the terminal about graphics when it is first imported; once Textual owns the
terminal that would steal Textual's input and change its modes. ``tui.terminal_probe`` has already
asked from a child process, so the import here hides the terminal from the library (it sees a
stdout that is not a TTY, the same as in a pipe), then the answer picks the widget class and
fills the library's cell-size cache. Importing NumPy and Pillow takes about 0.1 s, so the app
loads this in a worker once its first frame is up.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from textual.widget import Widget

from tui.terminal_probe import TerminalGraphics

PROTOCOLS = ("auto", "sixel", "tgp", "halfcell", "unicode")
_lock = threading.Lock()


class _NotATerminal:
    """Stands in for ``sys.__stdout__`` while textual-image is imported: same file, no TTY."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@contextmanager
def _terminal_hidden() -> Iterator[None]:
    real = sys.__stdout__
    sys.__stdout__ = _NotATerminal(real)  # type: ignore[misc]
    try:
        yield
    finally:
        sys.__stdout__ = real  # type: ignore[misc]


def _load(cell: tuple[int, int] | None) -> Any:
    if "textual_image.widget" in sys.modules:
        return sys.modules["textual_image.widget"]
    with _terminal_hidden():
        from textual_image import _terminal

        if cell is not None:
            _terminal.get_cell_size._result = _terminal.CellSize(*cell)  # type: ignore[attr-defined]
        import textual_image.widget as widgets
    return widgets


def widget_class(protocol: str, graphics: TerminalGraphics | None) -> type[Widget]:
    """The image widget class for a protocol name; ``auto`` takes the terminal's answer, and a
    terminal that gave none gets half-cell blocks (they work in any colour terminal)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown image protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}")
    with _lock:
        widgets = _load(graphics.cell if graphics else None)
    if protocol == "auto":
        protocol = graphics.protocol if graphics else "halfcell"
    return {
        "sixel": widgets.SixelImage,
        "tgp": widgets.TGPImage,
        "halfcell": widgets.HalfcellImage,
        "unicode": widgets.UnicodeImage,
    }.get(protocol, widgets.HalfcellImage)
