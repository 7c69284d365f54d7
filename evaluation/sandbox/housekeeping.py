"""Leftover sandbox folders: a killed chainmark (kill -9, power loss) cannot remove the work and
private folders of the sandboxes it was running. ``remove_leftovers`` is what ``chainmark gc`` calls."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PREFIXES = ("chainmark-sbx-", "chainmark-code-", "chainmark-tool-")
DEFAULT_MIN_AGE_S = 6 * 3600  # longer than any trajectory's wall budget, so a live run's folders are kept


@dataclass(frozen=True)
class Leftover:
    path: Path
    age_s: float


def find_leftovers(min_age_s: float = DEFAULT_MIN_AGE_S, root: Path | None = None) -> list[Leftover]:
    """Sandbox folders of this user in the temp folder, untouched for at least ``min_age_s``."""
    root = root or Path(tempfile.gettempdir())
    now = time.time()
    found = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(PREFIXES):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        age = now - st.st_mtime
        if age >= min_age_s:
            found.append(Leftover(Path(entry.path), age))
    return sorted(found, key=lambda x: x.path.name)


def remove_leftovers(
    min_age_s: float = DEFAULT_MIN_AGE_S, root: Path | None = None, dry_run: bool = False
) -> list[Leftover]:
    """Remove (or with ``dry_run`` only list) leftover sandbox folders; links inside are not followed."""
    found = find_leftovers(min_age_s, root)
    if not dry_run:
        for item in found:
            shutil.rmtree(item.path, ignore_errors=True)
    return found
