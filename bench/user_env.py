"""The environment a timed ``chainmark`` command gets: the caller's, as a user's shell would have it.

One difference from the caller's: ``PYTHONDONTWRITEBYTECODE`` is dropped. Sandboxes and CI images often
set it; a user's shell does not, so their first command compiles the project's modules once and every
later one loads the bytecode. With it set, every start recompiles them (≈ 0.05–0.08 s here), which is
not what a user waits for. The benches print this line so a reader knows which it was.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTE = "bytecode cache on, as in a user's shell (PYTHONDONTWRITEBYTECODE dropped for the timed commands)"


def command_env(**settings: str) -> dict[str, str]:
    """The caller's environment without PYTHONDONTWRITEBYTECODE, this checkout first on PYTHONPATH,
    plus ``settings`` (e.g. ``CHAINMARK_DB``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env.update(settings)
    return env


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def speed_note(loops: int = 1_000_000, tries: int = 5) -> str:
    """How fast this machine runs Python right now: the least CPU time of a fixed loop. The same
    command's CPU time moves with the other work on the cores (1.5-2.5x between days at a similar
    load average), so a bench's figures are read next to this line, and a change between two days
    is checked by instruction count (bench/instructions.py) before it is blamed on the code."""
    best = min(_timed_spin(loops) for _ in range(tries))
    return f"machine speed now: a fixed Python loop ({loops:,} steps) takes {1000 * best:.0f} ms CPU (least of {tries})"


def _timed_spin(loops: int) -> float:
    start = time.process_time()
    _spin(loops)
    return time.process_time() - start
