"""The environment a timed ``chainmark`` command gets: the caller's, as a user's shell would have it.

One difference from the caller's: ``PYTHONDONTWRITEBYTECODE`` is dropped. Sandboxes and CI images often
set it; a user's shell does not, so their first command compiles the project's modules once and every
later one loads the bytecode. With it set, every start recompiles them (≈ 0.05–0.08 s here), which is
not what a user waits for. The benches print this line so a reader knows which it was.
"""

from __future__ import annotations

import os
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
