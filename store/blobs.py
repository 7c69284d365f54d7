"""Content-addressed storage for images and artifacts (sha256 of the bytes is the address).

Two places a blob can live: a folder beside the SQLite file (the default: ``<db>.blobs/ab/cdef…``),
or the ``blob`` table in the database itself (for PostgreSQL teams who share one server and no
filesystem). ``put_asset`` writes the bytes and the ``Asset`` row together.

Written in SQLAlchemy Core over ``store.core_tables``: a run stores the images its tools make through a
plain connection, without building the SQLModel classes; the same functions take an ORM session.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from store import core_tables as t
from store.clock import utcnow
from store.db import resolve_url, sqlite_path

if TYPE_CHECKING:
    from store.models import Asset

ENV_BLOBS = "CHAINMARK_BLOBS"
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
PRIVATE_DIR = 0o700  # blob folders and files, like the database, are the owner's alone (files 0600)


class BlobNotFound(KeyError):
    """No blob with that sha256 is stored. Its message says so in words (a bare ``KeyError`` shows only
    the quoted digest, which is all a user saw when an image's file had been deleted)."""

    def __init__(self, sha256: str, where: Path | None = None) -> None:
        super().__init__(sha256)
        self.sha256 = sha256
        self.where = where

    def __str__(self) -> str:
        place = f" (no file {self.where})" if self.where is not None else ""
        return f"stored file {self.sha256[:12]}… is missing from the blob store{place}"


class BlobStore(Protocol):
    def put(self, data: bytes, session: Any = None) -> str: ...
    def get(self, sha256: str, session: Any = None) -> bytes: ...
    def exists(self, sha256: str, session: Any = None) -> bool: ...


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FolderBlobStore:
    """Blobs as files ``root/ab/<sha256>``.

    Folders are made 0700 and files 0600, whatever the umask allows beyond that: blobs hold the
    benchmark's images and the model's outputs, as private as the database beside them.
    A blob is written under a temporary name in its own folder and renamed into place, so its real
    name only ever points at complete bytes: a crash mid-write leaves a ``.tmp-…`` file, never a short
    blob. Plain ``os`` calls on string paths: a bulk import costs about what the file system does.
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self._root = os.fspath(self.root)
        self._tmp_seq = itertools.count()

    def path_of(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, session: Any = None) -> str:
        digest = sha256_of(data)
        self.put_hashed(digest, data)
        return digest

    def put_hashed(self, digest: str, data: bytes) -> bool:
        """Store ``data`` whose sha256 the caller already computed; False if it was stored before."""
        folder = os.path.join(self._root, digest[:2])
        target = os.path.join(folder, digest)
        if os.path.exists(target):
            return False
        tmp, fd = self._open_temp(folder)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True

    def _open_temp(self, folder: str) -> tuple[str, int]:
        # pid + store + counter is unique among live writers, without mkstemp's random-name loop.
        tmp = os.path.join(folder, f".tmp-{os.getpid()}-{id(self):x}-{next(self._tmp_seq)}")
        try:
            return tmp, os.open(tmp, _NEW_FILE, 0o600)
        except FileNotFoundError:  # the first blob of this fan-out folder (folders private: 0700)
            os.makedirs(self._root, PRIVATE_DIR, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:  # left behind by a crashed process that had the same pid
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            return tmp, fd
        return tmp, os.open(tmp, _NEW_FILE, 0o600)

    def get(self, sha256: str, session: Any = None) -> bytes:
        try:
            return self.path_of(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise BlobNotFound(sha256, self.path_of(sha256)) from exc

    def exists(self, sha256: str, session: Any = None) -> bool:
        return self.path_of(sha256).exists()


class TableBlobStore:
    """Blobs as rows of the ``blob`` table, written in the caller's transaction when given one (an
    ORM session or a connection)."""

    def __init__(self, engine: Engine | None):
        self.engine = engine

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy sent to another process (a harness child asks its parent to store a tool's image)
        has no engine: it writes and reads only in the transaction it is given."""
        return (TableBlobStore, (None,))

    def _own(self) -> Engine:
        if self.engine is None:
            raise RuntimeError("this blob store was sent from another process: give it a transaction")
        return self.engine

    def put(self, data: bytes, session: Any = None) -> str:
        digest = sha256_of(data)
        if session is not None:
            self._put(session, digest, data)
            return digest
        with self._own().begin() as own:
            self._put(own, digest, data)
        return digest

    @staticmethod
    def _put(reader: Any, digest: str, data: bytes) -> None:
        if reader.execute(sa.select(t.blob.c.sha256).where(t.blob.c.sha256 == digest)).first() is None:
            reader.execute(sa.insert(t.blob).values(sha256=digest, data=data))

    def get(self, sha256: str, session: Any = None) -> bytes:
        query = sa.select(t.blob.c.data).where(t.blob.c.sha256 == sha256)
        if session is not None:
            row = session.execute(query).first()
        else:
            with self._own().connect() as own:
                row = own.execute(query).first()
        if row is None:
            raise BlobNotFound(sha256)
        return bytes(row[0])

    def exists(self, sha256: str, session: Any = None) -> bool:
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
    from store.settings import current

    setting = setting or current().blobs
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


def put_asset(session: Any, blobs: BlobStore, data: bytes, mime: str | None = None) -> Asset:
    """Store bytes and return their Asset row (existing row if the same bytes were stored before)."""
    from store.models import Asset

    asset = session.get(Asset, put_asset_id(session, blobs, data, mime))
    assert asset is not None
    return asset


def put_asset_id(reader: Any, blobs: BlobStore, data: bytes, mime: str | None = None) -> int:
    """Store bytes and their ``asset`` row (kept if the same bytes were stored before) in the caller's
    transaction (a connection or an ORM session); the row's id."""
    digest = blobs.put(data, reader)
    known = reader.execute(sa.select(t.asset.c.id).where(t.asset.c.sha256 == digest)).scalar()
    if known is not None:
        return int(known)
    mime = mime or guess_mime(data)
    width = height = None
    if mime.startswith("image/"):
        try:
            from PIL import Image

            with Image.open(io.BytesIO(data)) as im:
                width, height = im.size
        except Exception:  # not decodable: keep the blob, leave the size unknown
            pass
    row = dict(sha256=digest, mime=mime, size=len(data), width=width, height=height, created_at=utcnow())
    return int(reader.execute(sa.insert(t.asset).values(**row).returning(t.asset.c.id)).scalar_one())
