"""Keep the garbage collector off the objects that already exist while a run goes or the TUI is open.

A run or the TUI starts in a process that has imported Textual, openai, pydantic, SQLAlchemy and the
tools: hundreds of thousands of long-lived objects. A full (oldest-generation) collection walks all of
them while holding the GIL: 80-120 ms in bench_harness's process, a stall for every model call in
flight should it fall inside a run, and for the key being typed in the TUI. ``gc.freeze`` sets the
existing objects aside while a holder needs it, so collections only look at what was allocated since
(their total time in bench_harness's run: 42-50 ms before, 31-34 ms after); ``gc.unfreeze`` hands them
back when the last holder lets go, and any garbage among them is collected as usual afterwards.

Holders nest (the TUI can start runs, several at once); a freeze made by someone else (a command's
exit, ``tui.exit_keep``) is left alone. Switch: ``CHAINMARK_PLAIN=heap_freeze``.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from store.speedups import enabled

_lock = threading.Lock()
_depth = 0  # holders in this process
_ours = False  # whether the freeze is this module's (another may have frozen the heap first)


class HeapHold:
    """One holder's share of the freeze: ``hold`` at most once, ``release`` any number of times; a
    hold asked after the release is refused (a worker that gets there after its app has closed)."""

    def __init__(self) -> None:
        self._held = False
        self._closed = False

    def hold(self) -> bool:
        global _depth, _ours
        if not enabled("heap_freeze"):
            return False
        with _lock:
            if self._held or self._closed:
                return False
            _depth += 1
            if _depth == 1:
                _ours = gc.get_freeze_count() == 0
                if _ours:
                    gc.freeze()
            self._held = True
            return True

    def release(self) -> None:
        global _depth
        with _lock:
            self._closed = True
            if not self._held:
                return
            self._held = False
            _depth -= 1
            if _depth == 0 and _ours:
                gc.unfreeze()


@contextmanager
def existing_objects_frozen() -> Iterator[None]:
    """The objects that exist now are frozen until the block ends (and no other holder remains)."""
    share = HeapHold()
    share.hold()
    try:
        yield
    finally:
        share.release()
