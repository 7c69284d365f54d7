"""Content-addressed blobs in a folder or in the database, deduplicated, with image metadata."""

from __future__ import annotations

import hashlib
import io
import os
import pickle

import pytest
from PIL import Image
from sqlmodel import select

from store import session_scope
from store.blobs import BlobNotFound, FolderBlobStore, TableBlobStore, default_blob_store, put_asset, put_asset_id
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


def test_table_store_sent_to_another_process_writes_in_the_transaction_it_is_given(any_engine):
    # A harness child hands its tool's image to the parent's database thread with the run's blob
    # store: the table store goes through the pipe without its engine (which does not pickle).
    sent = pickle.loads(pickle.dumps(TableBlobStore(any_engine)))
    image = _png(4, 3)
    with any_engine.begin() as conn:
        asset_id = put_asset_id(conn, sent, image)
        assert put_asset_id(conn, sent, image) == asset_id
    assert TableBlobStore(any_engine).get(hashlib.sha256(image).hexdigest()) == image
    with session_scope(any_engine) as s:
        asset = s.get(Asset, asset_id)
        assert asset is not None and (asset.mime, asset.width, asset.height) == ("image/png", 4, 3)
    with pytest.raises(RuntimeError, match="another process"):
        sent.get(hashlib.sha256(image).hexdigest())


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


def test_folder_store_never_shows_a_partly_written_blob(tmp_path, monkeypatch):
    """The bytes go to a temporary name first; a failure before the rename leaves no blob and no temp."""
    store = FolderBlobStore(tmp_path / "blobs")
    data = b"x" * 10_000
    real_write = os.write

    def short_then_fail(fd, buf):
        real_write(fd, bytes(buf[:100]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_fail)
    with pytest.raises(OSError):
        store.put(data)
    monkeypatch.setattr(os, "write", real_write)
    digest = hashlib.sha256(data).hexdigest()
    assert not store.exists(digest)
    assert [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()] == []
    assert store.put(data) == digest and store.get(digest) == data


def test_folder_store_rename_is_the_only_way_in(tmp_path, monkeypatch):
    """Interrupted between write and rename: the blob's own name never appears."""
    store = FolderBlobStore(tmp_path / "blobs")

    def interrupted(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.put(b"hello")
    assert not store.exists(hashlib.sha256(b"hello").hexdigest())


def test_put_hashed_skips_stored_blobs_and_reuses_fan_out_folders(tmp_path):
    store = FolderBlobStore(tmp_path / "blobs")
    datas = [bytes([i]) * 50 for i in range(40)]
    assert all(store.put_hashed(hashlib.sha256(d).hexdigest(), d) for d in datas)
    assert not any(store.put_hashed(hashlib.sha256(d).hexdigest(), d) for d in datas)
    assert all(store.get(hashlib.sha256(d).hexdigest()) == d for d in datas)
    assert not [p for p in (tmp_path / "blobs").rglob(".tmp-*")]


def test_temp_name_left_by_a_dead_writer_is_no_obstacle(tmp_path):
    store = FolderBlobStore(tmp_path / "blobs")
    digest = hashlib.sha256(b"data").hexdigest()
    folder = tmp_path / "blobs" / digest[:2]
    folder.mkdir(parents=True)
    stale = folder / f".tmp-{os.getpid()}-{id(store):x}-0"  # the name this store would pick first
    stale.write_bytes(b"junk")
    assert store.put(b"data") == digest and store.get(digest) == b"data"
    assert stale.read_bytes() == b"junk"
