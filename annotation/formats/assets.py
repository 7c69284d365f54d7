"""The distinct files of one import: each blob stored once, and their Asset rows created in one insert
(SQLAlchemy Core over ``store.core_tables``: no ORM needed)."""

from __future__ import annotations

import contextlib
import io
from typing import Iterable

import sqlalchemy as sa

from annotation.formats.blob_writer import BlobWrites
from annotation.formats.bulk import CHUNK, insert_returning_ids
from store.blobs import BlobStore, FolderBlobStore, guess_mime, sha256_of
from store.clock import utcnow
from store.core_tables import Reader, asset, connection_of


class AssetCache:
    """Asset ids by sha256 for one import; blobs not stored yet are written and get their rows.

    With ``background`` (use it as a context manager) a folder store's new files are written while
    the caller goes on; leaving the ``with`` block waits for them, so commit after it.
    """

    def __init__(self, reader: Reader, blobs: BlobStore, *, background: bool = False):
        self.reader = reader
        self.blobs = blobs
        self.ids: dict[str, int] = {}
        self.background = background
        self._writes: list[BlobWrites] = []

    def __enter__(self) -> AssetCache:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        writes, self._writes = self._writes, []
        for w in writes:
            if exc_type is None:
                w.wait()
            else:  # already failing: just don't leave the child behind
                with contextlib.suppress(OSError):
                    w.wait()

    def ensure(self, datas: Iterable[bytes]) -> int:
        """Store these bytes (once each); returns how many Asset rows were new."""
        return self.ensure_hashed((sha256_of(data), data) for data in datas)

    def ensure_hashed(self, items: Iterable[tuple[str, bytes]]) -> int:
        """The same for ``(sha256, bytes)`` pairs whose hash the caller already has."""
        pending: dict[str, bytes] = {}
        for sha, data in items:
            if sha not in self.ids and sha not in pending:
                pending[sha] = data
        shas = list(pending)
        for i in range(0, len(shas), CHUNK):
            chunk = shas[i : i + CHUNK]
            conn = connection_of(self.reader)
            for aid, sha in conn.execute(sa.select(asset.c.id, asset.c.sha256).where(asset.c.sha256.in_(chunk))):
                self.ids[sha] = aid
        fresh = {sha: data for sha, data in pending.items() if sha not in self.ids}
        if self.background and isinstance(self.blobs, FolderBlobStore):
            self._writes.append(BlobWrites(self.blobs, fresh))
        else:
            store_blobs(self.blobs, self.reader, fresh)
        now = utcnow()
        rows = []
        for sha, data in fresh.items():
            mime = guess_mime(data)
            w, h = image_size(data, mime)
            rows.append({"sha256": sha, "mime": mime, "size": len(data), "width": w, "height": h, "created_at": now})
        for row, aid in zip(rows, insert_returning_ids(self.reader, asset, rows)):
            self.ids[row["sha256"]] = aid
        return len(rows)

    def id_of(self, data: bytes) -> int:
        return self.ids[sha256_of(data)]

    def id_of_hash(self, sha: str) -> int:
        return self.ids[sha]


def store_blobs(blobs: BlobStore, reader: Reader, by_sha: dict[str, bytes]) -> None:
    """Write blobs whose hashes are known (a folder store skips hashing them again)."""
    if isinstance(blobs, FolderBlobStore):
        for sha, data in by_sha.items():
            blobs.put_hashed(sha, data)
    else:
        for data in by_sha.values():
            blobs.put(data, reader)


def image_size(data: bytes, mime: str) -> tuple[int | None, int | None]:
    if mime == "image/png" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")  # no decode needed
    if not mime.startswith("image/"):
        return None, None
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as im:  # reads the header only
            return im.size
    except Exception:  # undecodable: keep the bytes, size unknown
        return None, None
