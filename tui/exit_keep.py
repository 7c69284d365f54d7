"""Objects a command leaves to the process's exit instead of freeing them itself.

``chainmark score`` ends with a scored run in memory: 10,000 trajectories' items and their result are
about a million small objects, and freeing them one by one is ≈ 0.15 s of a command that exits right
after (the exit hands the memory back whole). ``keep_until_exit`` holds them; ``main`` (``tui.cli``),
once the command is done, makes the holder a reference cycle and freezes it with everything else, so
neither the module teardown (reference counts) nor the last collection (frozen objects are skipped)
frees them. A process that runs commands in turn and does not exit (tests, ``CliRunner``) holds only
the last command's objects: each call drops the previous ones, which are freed then.
"""

from __future__ import annotations

import gc
from typing import Any

_kept: list[Any] = []


def keep_until_exit(*objects: Any) -> None:
    from store.speedups import enabled

    _kept[:] = objects if enabled("exit_keep") else ()


def leave_to_exit() -> None:
    """Called once the command is done, as the process exits: the kept objects and every other object
    are frozen (no final collection over them, see ``tui.cli._no_final_collection``)."""
    _kept.append(_kept)  # a cycle: the module teardown cannot free it by reference counting
    gc.freeze()
