"""Sandbox folders in the temp folder, and how ``gc`` tells a live one from one a killed process left.

Every such folder is ``<tmp>/chainmark-<kind>-XXXX/`` (mode 0700, never bound into a sandbox) and
holds a ``lock`` file. The process that made the folder holds an ``flock`` on that file for as long
as it uses the folder; the kernel drops the lock when that process ends, however it ends (kill -9
too). So a folder whose lock can be taken has no owner left, and one whose lock is held is live
work that nothing may delete, however old it is.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIXES = ("chainmark-sbx-", "chainmark-code-", "chainmark-tool-", "chainmark-boot-", "chainmark-sandbox-")
LOCK_NAME = "lock"
# A folder is made, then its lock file, then the lock is taken: in between it looks ownerless.
# Nothing younger than this is ever taken for dead (the set-up takes microseconds).
SETUP_GRACE_S = 10.0
_LOCK_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC


@contextmanager
def held_folder(prefix: str) -> Iterator[Path]:
    """A new private folder in the temp folder, locked as live until the block ends, then removed."""
    if not prefix.startswith(PREFIXES):
        raise ValueError(f"{prefix!r} is not a sandbox folder prefix gc knows: {PREFIXES}")
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    fd = os.open(folder / LOCK_NAME, _LOCK_FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # still locked: gc cannot race the removal
        os.close(fd)


def is_live(folder: Path) -> bool:
    """True while the process that made ``folder`` holds its lock (a folder without one, from an
    older chainmark, counts as ownerless)."""
    try:
        fd = os.open(folder / LOCK_NAME, _LOCK_FLAGS)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock if we took it
    return False


def dead_folders(root: Path, min_age_s: float) -> list[tuple[Path, float]]:
    """Sandbox folders of this user under ``root`` whose owner is gone, untouched for at least
    ``min_age_s`` (and never younger than the set-up grace), with their age in seconds."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    now = time.time()
    found = []
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
        if age >= max(min_age_s, SETUP_GRACE_S) and not is_live(Path(entry.path)):
            found.append((Path(entry.path), age))
    return found


def remove_if_dead(folder: Path) -> bool:
    """Remove ``folder`` unless its owner took it back meanwhile; links inside are not followed."""
    if is_live(folder):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True
