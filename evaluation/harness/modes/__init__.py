"""One module per run mode; each exposes ``async def run(ep: Episode) -> None``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from evaluation import vocab

MODES = vocab.RUN_MODES


def mode_runner(mode: str) -> Callable[[Any], Awaitable[None]]:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    import importlib

    return importlib.import_module(f"evaluation.harness.modes.{mode}").run  # type: ignore[no-any-return]
