"""Keep the garbage collector off the objects that already exist while a run is going.

A run starts in a process that has imported openai, pydantic, SQLAlchemy and the tools: hundreds of
thousands of long-lived objects. A full (oldest-generation) collection walks all of them while
holding the GIL: 80-120 ms in bench_harness's process, a stall for every model call in flight should
it fall inside a run. ``gc.freeze`` sets the existing objects aside for the duration of the run, so
collections only look at what the run allocates (their total time in bench_harness's run: 42-50 ms
before, 31-34 ms after); ``gc.unfreeze`` hands them back when the last run ends, and any garbage among
them is collected as usual afterwards. A process that froze its heap itself (the TUI does, after
startup) keeps its freeze: the runs leave it alone.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from store.speedups import enabled

_lock = threading.Lock()
_depth = 0  # runs in progress in this process (the TUI can run several at once)
_ours = False  # whether the freeze is this module's (a host such as the TUI may hold its own)


@contextmanager
def existing_objects_frozen() -> Iterator[None]:
    global _depth, _ours
    if not enabled("heap_freeze"):
        yield
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            _ours = gc.get_freeze_count() == 0
            if _ours:
                gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _ours:
                gc.unfreeze()
