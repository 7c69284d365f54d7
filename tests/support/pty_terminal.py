"""A minimal terminal for tests and benchmarks: run a command on a pseudo-terminal, answer the
queries a real terminal answers, and wait for text to appear on screen.

Timing the TUI through a real pty measures what a user sees (process start, imports, terminal
probing, Textual's driver and its output) instead of what the in-process test harness adds.
The screen is approximated by the output stream with escape sequences removed: Textual writes each
changed run of cells as one piece of text, so words on screen show up intact in that stream.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from typing import Sequence

ESCAPES = re.compile(
    rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|_[^\x1b]*\x1b\\|P[^\x1b]*\x1b\\|[@-Z\\-_])"
)
DEVICE_ATTRIBUTES_QUERY = b"\x1b[c"
CELL_SIZE_QUERY = b"\x1b[16t"
XTERM_ATTRIBUTES = b"\x1b[?62;22c"  # a VT220-class terminal with colour and no Sixel (like xterm)
KITTY_GRAPHICS_QUERY = re.compile(rb"\x1b_Gi=(\d+),[^;]*a=q[^\x1b]*\x1b\\")


def pty_or_skip() -> None:
    """Skip the calling test where the machine has no pseudo-terminals (some containers)."""
    import pytest

    try:
        master, slave = os.openpty()
    except OSError as exc:
        pytest.skip(f"no pseudo-terminal available here: {exc}")
    os.close(master)
    os.close(slave)


class PtyTerminal:
    """One process on a pty of a fixed size; ``wait_for`` returns when a pattern is on screen."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        size: tuple[int, int] = (140, 44),
        env: dict[str, str] | None = None,
        device_attributes: bytes | None = XTERM_ATTRIBUTES,
        kitty_graphics: bool = False,
        pixels: bool = True,
        cell_size: tuple[int, int] = (10, 20),
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        """``device_attributes``: the answer to ``ESC [ c`` (None: stay silent); ``kitty_graphics``:
        answer kitty's graphics query with OK; ``pixels``: report the window size in pixels in the
        kernel's window size (else only the ``ESC [ 16 t`` answer tells the ``cell_size``)."""
        master, slave = os.openpty()
        cols, rows = size
        width, height = (cols * cell_size[0], rows * cell_size[1]) if pixels else (0, 0)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, width, height))
        self.device_attributes = device_attributes
        self.kitty_graphics = kitty_graphics
        self.cell_size = cell_size
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
            start_new_session=True,
            env=env,
            cwd=cwd,
        )
        os.close(slave)
        self.master = master
        self.raw = bytearray()
        self.text = ""
        self._pending = b""  # an escape sequence cut in two by a read waits for its end
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._seen = 0

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.master, 1 << 16)
        except OSError:  # the child closed the pty
            raise EOFError("the program exited:\n" + self.text[-2000:]) from None
        if not chunk:
            raise EOFError("the program exited:\n" + self.text[-2000:])
        self.raw += chunk
        if self.kitty_graphics and (query := KITTY_GRAPHICS_QUERY.search(chunk)):
            os.write(self.master, b"\x1b_Gi=" + query.group(1) + b";OK\x1b\\")
        if CELL_SIZE_QUERY in chunk:
            os.write(self.master, b"\x1b[6;%d;%dt" % (self.cell_size[1], self.cell_size[0]))
        if DEVICE_ATTRIBUTES_QUERY in chunk and self.device_attributes is not None:
            os.write(self.master, self.device_attributes)
        pending = self._pending + chunk
        cut = pending.rfind(b"\x1b")
        if cut != -1 and not ESCAPES.match(pending, cut):
            pending, self._pending = pending[:cut], pending[cut:]
        else:
            self._pending = b""
        self.text += self._decoder.decode(ESCAPES.sub(b"", pending))

    def mark(self) -> None:
        """Only text written after this point counts for the next ``wait_for``."""
        self._seen = len(self.text)

    def wait_for(self, pattern: str, timeout: float = 30.0) -> float:
        """Seconds (perf_counter) at which ``pattern`` (a regex) appeared in the output after ``mark``."""
        rx = re.compile(pattern)
        deadline = time.perf_counter() + timeout
        while not rx.search(self.text, self._seen):
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"{pattern!r} did not appear within {timeout} s; last output:\n" + self.text[-1500:])
            self._pump(min(left, 0.05))
        found = time.perf_counter()
        self._seen = len(self.text)
        return found

    def send(self, keys: str) -> float:
        self.mark()
        sent = time.perf_counter()
        os.write(self.master, keys.encode())
        return sent

    def quit(self, keys: str = "\x11", timeout: float = 10.0) -> int:
        """Send the quit keys and read output until the program exits (it blocks if nobody reads)."""
        self.send(keys)
        deadline = time.perf_counter() + timeout
        while self.proc.poll() is None and time.perf_counter() < deadline:
            try:
                self._pump(0.05)
            except EOFError:
                break
        return self.proc.wait(max(0.1, deadline - time.perf_counter()))

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)
