"""Garbage the store can leave behind, found and removed: blobs no asset row references (the bytes of
an import or a run whose transaction rolled back: blobs are written before the rows that name them),
``.tmp-*`` files of blob writes that were killed half way, work folders of sandboxes whose process
is gone (a live sandbox holds a lock on its folder: ``store.sandbox_folders``), and disk reserves (``store.reserve``) of killed runs.

Only things older than ``min_age_s`` are touched, so a write in progress in another process (a blob
written, its row not yet committed) is never taken for garbage.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import Session, select

from store.blobs import BlobStore, FolderBlobStore, TableBlobStore
from store.db import sqlite_path
from store.models import Asset, Blob
from store.reserve import stale_reserves
from store.sandbox_folders import PREFIXES as SANDBOX_PREFIXES
from store.sandbox_folders import dead_folders, remove_if_dead

DEFAULT_MIN_AGE_S = 3600.0
_SHA = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class Garbage:
    orphan_blobs: list[str] = field(default_factory=list)  # sha256 of blobs no asset references
    temp_files: list[Path] = field(default_factory=list)  # .tmp-* files and dead sandbox folders
    bytes: int = 0

    @property
    def empty(self) -> bool:
        return not self.orphan_blobs and not self.temp_files


def find_garbage(
    session: Session, blobs: BlobStore, *, min_age_s: float = DEFAULT_MIN_AGE_S, temp_root: Path | None = None
) -> Garbage:
    """List what ``collect`` would remove (nothing is changed)."""
    out = Garbage()
    cutoff = time.time() - min_age_s
    referenced = set(session.exec(select(Asset.sha256)).all())
    if isinstance(blobs, FolderBlobStore):
        _folder_garbage(blobs.root, referenced, cutoff, out)
    elif isinstance(blobs, TableBlobStore):
        rows = session.exec(
            select(Blob.sha256, sa.func.length(Blob.data)).where(sa.not_(sa.column("sha256").in_(select(Asset.sha256))))
        ).all()
        for sha, size in rows:
            out.orphan_blobs.append(sha)
            out.bytes += int(size or 0)
    out.temp_files += [path for path, _ in dead_folders(temp_root or Path(tempfile.gettempdir()), min_age_s)]
    db = sqlite_path(str(session.get_bind().engine.url))
    if db is not None:  # disk reserves of runs that were killed
        for path in stale_reserves(db):
            out.temp_files.append(path)
            out.bytes += path.stat().st_size
    return out


def _folder_garbage(root: Path, referenced: set[str], cutoff: float, out: Garbage) -> None:
    if not root.is_dir():
        return
    for fan in sorted(os.scandir(root), key=lambda e: e.name):
        if not fan.is_dir(follow_symlinks=False):
            continue
        for entry in sorted(os.scandir(fan.path), key=lambda e: e.name):
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            if st.st_mtime > cutoff:
                continue
            if entry.name.startswith(".tmp-"):
                out.temp_files.append(Path(entry.path))
                out.bytes += st.st_size
            elif _SHA.match(entry.name) and entry.name not in referenced:
                out.orphan_blobs.append(entry.name)
                out.bytes += st.st_size


def collect(session: Session, blobs: BlobStore, garbage: Garbage) -> int:
    """Remove what ``find_garbage`` listed; returns how many things were removed. A blob that an
    asset row references by now (written meanwhile) is kept."""
    removed = 0
    if garbage.orphan_blobs:
        still_free = set(garbage.orphan_blobs) - set(
            session.exec(select(Asset.sha256).where(sa.column("sha256").in_(garbage.orphan_blobs))).all()
        )
        if isinstance(blobs, FolderBlobStore):
            for sha in sorted(still_free):
                try:
                    blobs.path_of(sha).unlink()
                    removed += 1
                except FileNotFoundError:
                    pass
        elif isinstance(blobs, TableBlobStore) and still_free:
            result = session.execute(sa.delete(Blob).where(sa.column("sha256").in_(sorted(still_free))))
            removed += result.rowcount or 0
    for path in garbage.temp_files:
        if path.name.startswith(SANDBOX_PREFIXES) and path.is_dir() and not path.is_symlink():
            removed += remove_if_dead(path)  # a live sandbox's lock is checked again: it may be back
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    return removed
