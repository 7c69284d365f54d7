"""Run VTC-Bench's own scorer (``VTCBenchDataset.evaluate``) from the user's checkout, as a subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def run_reference(export_dir: Path, reference: Path, python: str) -> dict[str, Any]:
    raise NotImplementedError
