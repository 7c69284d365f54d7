"""Leftover sandbox folders: a killed chainmark (kill -9, power loss) cannot remove the work and
private folders of the sandboxes it was running. A live sandbox holds a lock on its folder
(``store.sandbox_folders``), so only folders whose process is gone are ever listed or removed."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from store.sandbox_folders import PREFIXES, dead_folders, remove_if_dead

__all__ = ["DEFAULT_MIN_AGE_S", "PREFIXES", "Leftover", "find_leftovers", "remove_leftovers"]
DEFAULT_MIN_AGE_S = 6 * 3600


@dataclass(frozen=True)
class Leftover:
    path: Path
    age_s: float


def find_leftovers(min_age_s: float = DEFAULT_MIN_AGE_S, root: Path | None = None) -> list[Leftover]:
    """Sandbox folders of this user in the temp folder whose owner is gone, untouched for ``min_age_s``."""
    return [Leftover(p, age) for p, age in dead_folders(root or Path(tempfile.gettempdir()), min_age_s)]


def remove_leftovers(
    min_age_s: float = DEFAULT_MIN_AGE_S, root: Path | None = None, dry_run: bool = False
) -> list[Leftover]:
    """Remove (or with ``dry_run`` only list) leftover sandbox folders; links inside are not followed."""
    found = find_leftovers(min_age_s, root)
    if not dry_run:
        found = [item for item in found if remove_if_dead(item.path)]
    return found
