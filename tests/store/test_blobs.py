"""Content-addressed blobs in a folder or in the database, deduplicated, with image metadata."""

from __future__ import annotations

import hashlib
import io

import pytest
from PIL import Image
from sqlmodel import select

from store import session_scope
from store.blobs import BlobNotFound, FolderBlobStore, TableBlobStore, default_blob_store, put_asset
from store.models import Asset


def _png(w: int, h: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (10, 200, 30)).save(buf, "PNG")
    return buf.getvalue()


def test_folder_store_addresses_by_sha256_and_deduplicates(tmp_path):
    store = FolderBlobStore(tmp_path / "blobs")
    digest = store.put(b"hello")
    assert digest == hashlib.sha256(b"hello").hexdigest()
    assert store.path_of(digest) == tmp_path / "blobs" / digest[:2] / digest
    assert store.put(b"hello") == digest
    assert store.get(digest) == b"hello"
    assert len(list((tmp_path / "blobs").rglob("*"))) == 2  # one folder, one file
    with pytest.raises(BlobNotFound):
        store.get("0" * 64)


def test_table_store_keeps_bytes_in_the_database(any_engine):
    store = TableBlobStore(any_engine)
    digest = store.put(b"\x00\x01binary")
    assert store.get(digest) == b"\x00\x01binary"
    assert store.exists(digest) and not store.exists("f" * 64)


def test_put_asset_records_mime_size_and_dimensions_once(any_engine, tmp_path):
    blobs = default_blob_store(any_engine) if any_engine.dialect.name != "sqlite" else FolderBlobStore(tmp_path / "b")
    data = _png(31, 17)
    with session_scope(any_engine) as s:
        a = put_asset(s, blobs, data)
        b = put_asset(s, blobs, data)
        assert a.id == b.id
        assert (a.mime, a.size, a.width, a.height) == ("image/png", len(data), 31, 17)
    with session_scope(any_engine) as s:
        assert len(s.exec(select(Asset)).all()) == 1
        assert blobs.get(a.sha256, s) == data


def test_default_store_is_a_folder_beside_sqlite_and_a_table_elsewhere(engine, db_path, monkeypatch):
    store = default_blob_store(engine)
    assert isinstance(store, FolderBlobStore)
    assert store.root == db_path.with_name(db_path.name + ".blobs")
    monkeypatch.setenv("CHAINMARK_BLOBS", "table")
    assert isinstance(default_blob_store(engine), TableBlobStore)
