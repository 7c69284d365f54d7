"""Pause Python's cyclic garbage collector for a bulk read or write (an import, loading and scoring a
run): shared by annotation and evaluation, which may not import each other.

Such work builds millions of small objects that all stay alive until it ends, and each automatic
collection walks them again (about a fifth of a 10,000-task import's CPU time, half of loading a
10,000-trajectory run for scoring). Nothing it makes relies on the collector: reference counting
frees everything acyclic meanwhile. On the way out the survivors are moved to the oldest generation
as they are (``freeze`` + ``unfreeze``), not scanned once more as young objects (0.2 s after parsing
10,000 tasks); that is skipped if the program keeps frozen objects of its own.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from store.speedups import enabled


@contextmanager
def gc_paused() -> Iterator[None]:
    if not enabled("gc_pause"):
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
