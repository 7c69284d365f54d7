"""New blob files of an import, written by a forked child: all of them, the same bytes, its failure
raised in the parent before anything commits, and no fork where a fork is not safe."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from annotation.formats import blob_writer
from annotation.formats.api import import_dataset
from annotation.formats.blob_writer import BlobWrites
from store.blobs import FolderBlobStore, sha256_of
from tests.formats.conftest import row_counts
from tests.formats.conftest import end_other_threads
from tests.formats.fixtures import png, write_gta


@pytest.fixture
def forks(monkeypatch) -> list[int]:
    """Fork for any number of files; the children's pids, to check each was waited for. The writer
    forks only from a single-threaded process: an image test run earlier in this worker may have left
    the background encode pool's threads, so they are ended first."""
    end_other_threads()
    monkeypatch.setattr(blob_writer, "FORK_MIN_BLOBS", 1)
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


def _blobs(n: int) -> dict[str, bytes]:
    datas = [png(i) for i in range(n)]
    return {sha256_of(d): d for d in datas}


def _all_reaped(pids: list[int]) -> bool:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def test_child_writes_every_file(tmp_path: Path, forks) -> None:
    store = FolderBlobStore(tmp_path / "blobs")
    by_sha = _blobs(40)
    BlobWrites(store, by_sha).wait()
    assert len(forks) == 1 and _all_reaped(forks)
    assert all(store.get(sha) == data for sha, data in by_sha.items())
    assert sorted(p.name for p in (tmp_path / "blobs").rglob("*") if p.is_file()) == sorted(by_sha)


def test_child_failure_is_raised_as_the_same_oserror(tmp_path: Path, forks) -> None:
    (tmp_path / "blobs").write_text("a file where the blob folder should be")
    store = FolderBlobStore(tmp_path / "blobs")
    with pytest.raises(OSError) as inline:
        store.put(png(1))
    writes = BlobWrites(store, _blobs(3))
    with pytest.raises(OSError) as forked:
        writes.wait()
    assert forked.value.errno == inline.value.errno == errno.ENOTDIR
    assert len(forks) == 1 and _all_reaped(forks)


def test_no_fork_while_other_threads_run(tmp_path: Path, forks) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        store = FolderBlobStore(tmp_path / "blobs")
        by_sha = _blobs(5)
        writes = BlobWrites(store, by_sha)
        assert not forks  # written in-process, already done
        assert all(store.exists(sha) for sha in by_sha)
        writes.wait()
    finally:
        stop.set()
        other.join()


def test_failed_blob_writes_roll_the_import_back(engine, tmp_path: Path, forks) -> None:
    write_gta(tmp_path / "src", n=4)
    (tmp_path / "blobs").write_text("not a folder")
    before = row_counts(engine)
    with pytest.raises(OSError):
        import_dataset(engine, FolderBlobStore(tmp_path / "blobs"), "gta", tmp_path / "src")
    assert row_counts(engine) == before
    assert len(forks) == 1 and _all_reaped(forks)


def test_import_that_fails_after_the_fork_leaves_no_child(engine, blobs, tmp_path: Path, forks, monkeypatch) -> None:
    from annotation.formats import writer

    write_gta(tmp_path / "src", n=4)

    def broken(*_args, **_kwargs):
        raise RuntimeError("database trouble")

    monkeypatch.setattr(writer, "insert_audited", broken)
    before = row_counts(engine)
    with pytest.raises(RuntimeError, match="database trouble"):
        import_dataset(engine, blobs, "gta", tmp_path / "src")
    assert row_counts(engine) == before
    assert len(forks) == 1 and _all_reaped(forks)
