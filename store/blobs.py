"""Content-addressed storage for images and artifacts (sha256 of the bytes is the address).

Two places a blob can live: a folder beside the SQLite file (the default: ``<db>.blobs/ab/cdef…``),
or the ``blob`` table in the database itself (for PostgreSQL teams who share one server and no
filesystem). ``put_asset`` writes the bytes and the ``Asset`` row together.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path
from typing import Protocol

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from store.db import resolve_url, sqlite_path
from store.models import Asset, Blob

ENV_BLOBS = "CHAINMARK_BLOBS"


class BlobNotFound(KeyError):
    """No blob with that sha256 is stored."""


class BlobStore(Protocol):
    def put(self, data: bytes, session: Session | None = None) -> str: ...
    def get(self, sha256: str, session: Session | None = None) -> bytes: ...
    def exists(self, sha256: str, session: Session | None = None) -> bool: ...


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FolderBlobStore:
    """Blobs as files ``root/ab/<sha256>``; writes are atomic (temp file + rename)."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)

    def path_of(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, session: Session | None = None) -> str:
        digest = sha256_of(data)
        target = self.path_of(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        return digest

    def get(self, sha256: str, session: Session | None = None) -> bytes:
        try:
            return self.path_of(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise BlobNotFound(sha256) from exc

    def exists(self, sha256: str, session: Session | None = None) -> bool:
        return self.path_of(sha256).exists()


class TableBlobStore:
    """Blobs as rows of the ``blob`` table, written in the caller's transaction when given one."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def put(self, data: bytes, session: Session | None = None) -> str:
        digest = sha256_of(data)
        if session is not None:
            if session.get(Blob, digest) is None:
                session.add(Blob(sha256=digest, data=data))
                session.flush()
            return digest
        with Session(self.engine) as own:
            if own.get(Blob, digest) is None:
                own.add(Blob(sha256=digest, data=data))
                own.commit()
        return digest

    def get(self, sha256: str, session: Session | None = None) -> bytes:
        if session is not None:
            row = session.get(Blob, sha256)
        else:
            with Session(self.engine) as own:
                row = own.get(Blob, sha256)
        if row is None:
            raise BlobNotFound(sha256)
        return row.data

    def exists(self, sha256: str, session: Session | None = None) -> bool:
        try:
            self.get(sha256, session)
            return True
        except BlobNotFound:
            return False


def default_blob_store(engine: Engine, setting: str | None = None) -> BlobStore:
    """Pick the blob store: ``table``, an explicit folder path, or the folder beside the SQLite file.

    ``setting`` defaults to the ``CHAINMARK_BLOBS`` environment variable. A non-SQLite database with
    no setting stores blobs in its own table, so a PostgreSQL team needs no shared filesystem.
    """
    setting = setting or os.environ.get(ENV_BLOBS)
    if setting == "table":
        return TableBlobStore(engine)
    if setting:
        return FolderBlobStore(setting)
    path = sqlite_path(resolve_url(str(engine.url)))
    if path is None:
        return TableBlobStore(engine)
    return FolderBlobStore(path.with_name(path.name + ".blobs"))


def guess_mime(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:2] == b"BM":
        return "image/bmp"
    if data.lstrip()[:1] in (b"{", b"["):
        return "application/json"
    return "application/octet-stream"


def put_asset(session: Session, blobs: BlobStore, data: bytes, mime: str | None = None) -> Asset:
    """Store bytes and return their Asset row (existing row if the same bytes were stored before)."""
    digest = blobs.put(data, session)
    asset = session.exec(select(Asset).where(Asset.sha256 == digest)).first()
    if asset is not None:
        return asset
    mime = mime or guess_mime(data)
    width = height = None
    if mime.startswith("image/"):
        try:
            from PIL import Image

            with Image.open(io.BytesIO(data)) as im:
                width, height = im.size
        except Exception:  # not decodable: keep the blob, leave the size unknown
            pass
    asset = Asset(sha256=digest, mime=mime, size=len(data), width=width, height=height)
    session.add(asset)
    session.flush()
    return asset
