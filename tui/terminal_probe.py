"""Ask the terminal what it can draw (Sixel, kitty graphics, its cell size) while Textual loads.

textual-image asks when it is imported, one question at a time with a 0.1 s wait for each answer,
after importing NumPy; all of that used to sit before the first frame. Here a thread asks all
questions in one write and stops at the Primary Device Attributes answer, which every VT100-class
terminal sends and sends last: a terminal without kitty graphics simply never answered that
question, so nobody waits for a timeout. The answer picks the widget class later
(``tui.image_widgets``), which then imports textual-image without letting it ask again.

Preference order (textual-image's): Sixel when the device attributes list 4, then kitty graphics,
then half-cell blocks, which any colour terminal draws.
"""

from __future__ import annotations

import os
import re
import select
import struct
import sys
import threading
import time
from dataclasses import dataclass

KITTY_QUERY = b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"
CELL_SIZE_QUERY = b"\x1b[16t"
DEVICE_ATTRIBUTES_QUERY = b"\x1b[c"
DEVICE_ATTRIBUTES = re.compile(rb"\x1b\[\?([0-9;]*)c")
KITTY_REPLY = re.compile(rb"\x1b_Gi=31;([^\x1b]*)\x1b\\")
CELL_SIZE_REPLY = re.compile(rb"\x1b\[6;(\d+);(\d+)t")
TIMEOUT = 1.0
"""Seconds to wait for the device attributes (they come back in one round trip, even over SSH)."""


@dataclass(frozen=True)
class TerminalGraphics:
    """What the terminal answered: the protocol to draw images with, and the cell size in pixels."""

    protocol: str  # "sixel", "tgp" or "halfcell"
    cell: tuple[int, int] | None  # (width, height)


def parse_replies(data: bytes, cell: tuple[int, int] | None = None) -> TerminalGraphics | None:
    """Read the terminal's answers; None until the device attributes (the last answer) are in."""
    attributes = DEVICE_ATTRIBUTES.search(data)
    if attributes is None:
        return None
    if cell is None and (size := CELL_SIZE_REPLY.search(data)):
        height, width = int(size.group(1)), int(size.group(2))
        cell = (width, height) if width and height else None
    kitty = KITTY_REPLY.search(data)
    if "4" in attributes.group(1).decode().split(";"):
        protocol = "sixel"
    elif kitty is not None and kitty.group(1) == b"OK":
        protocol = "tgp"
    else:
        protocol = "halfcell"
    return TerminalGraphics(protocol, cell)


def _cell_from_window_size(fd: int) -> tuple[int, int] | None:
    import fcntl
    import termios

    try:
        rows, cols, width, height = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    except OSError:
        return None
    if rows and cols and width and height:
        return (width // cols, height // rows)
    return None


def ask(in_fd: int, out_fd: int, timeout: float = TIMEOUT) -> TerminalGraphics | None:
    """Send the questions and read the answers (the terminal must not be in use by anyone else)."""
    import termios
    import tty

    cell = _cell_from_window_size(out_fd)
    saved = termios.tcgetattr(in_fd)
    try:
        tty.setraw(in_fd, termios.TCSANOW)
        os.write(out_fd, KITTY_QUERY + (b"" if cell else CELL_SIZE_QUERY) + DEVICE_ATTRIBUTES_QUERY)
        data = b""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([in_fd], [], [], left)
            if not ready:
                break
            data += os.read(in_fd, 1024)
            if (answer := parse_replies(data, cell)) is not None:
                return answer
        return None
    finally:
        termios.tcsetattr(in_fd, termios.TCSANOW, saved)


_thread: threading.Thread | None = None
_answer: TerminalGraphics | None = None


def _on_a_terminal() -> bool:
    return bool(sys.__stdout__ and sys.__stdout__.isatty() and sys.__stdin__ and sys.__stdin__.isatty())


def start() -> None:
    """Start asking in a thread; nothing to ask when not on a terminal (tests, pipes)."""
    global _thread
    if _thread is not None or not _on_a_terminal():
        return

    def run() -> None:
        global _answer
        try:
            _answer = ask(sys.__stdin__.fileno(), sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (OSError, ValueError):
            _answer = None

    _thread = threading.Thread(target=run, name="terminal-probe", daemon=True)
    _thread.start()


def answer() -> TerminalGraphics | None:
    """The terminal's answer (waits for the thread; call before Textual starts). None if nobody
    asked or the terminal did not answer; callers then use half-cell blocks."""
    if _thread is not None:
        _thread.join()
    return _answer
