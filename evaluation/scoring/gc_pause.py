"""Pause Python's cyclic garbage collector while a run's items are built and scored.

Loading a run creates millions of small dicts and lists that all stay alive; every few thousand of
them the collector walks the growing heap looking for cycles there are none of. That walk was about
half of ``load_run``'s time at 10k trajectories and grows with the run. Reference counting still frees
everything acyclic while paused; the collector resumes (if it was on) when the block ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
