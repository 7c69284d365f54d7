"""``chainmark gc`` removes what no row references (orphan blobs, ``.tmp-*`` files of killed writes,
dead sandbox folders) and keeps every referenced blob; ``--dry-run`` only lists. The database and
blob files are created private to their owner (files 0600, folders 0700)."""

from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlmodel import select

from store import make_engine, session_scope
from store.blobs import FolderBlobStore, TableBlobStore, put_asset
from store.gc import collect, find_garbage
from store.migrate import upgrade
from store.models import Asset, Blob
from tui.cli import cli


@pytest.fixture(autouse=True)
def private_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``gc`` also looks at the temp folder: these tests point it at their own, never the real /tmp
    (where ``--min-age 0`` could take the folders of other users' live runs)."""
    root = tmp_path / "temp-root"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _orphans_and_referenced(engine, blobs) -> tuple[str, str]:
    with session_scope(engine) as s:
        referenced = put_asset(s, blobs, b"kept bytes").sha256
    orphan = blobs.put(b"bytes of an import that rolled back")  # the row never came
    return orphan, referenced


def test_gc_dry_run_lists_and_gc_removes_only_orphans_and_temp_files(engine, db_path: Path, blobs) -> None:
    orphan, referenced = _orphans_and_referenced(engine, blobs)
    tmp = blobs.path_of(orphan).parent / ".tmp-123-abc-0"
    tmp.write_bytes(b"half a blob")
    runner = CliRunner()
    r = runner.invoke(cli, ["--db", str(db_path), "gc", "--dry-run", "--min-age", "0"])
    assert r.exit_code == 0, r.output
    assert f"would remove orphan blob {orphan}" in r.stdout and f"would remove temp {tmp}" in r.stdout
    assert referenced not in r.stdout and "nothing removed (--dry-run)" in r.stdout
    assert blobs.path_of(orphan).exists() and tmp.exists()

    r = runner.invoke(cli, ["--db", str(db_path), "gc", "--min-age", "0"])
    assert r.exit_code == 0, r.output
    assert "removed 2 item(s)" in r.stdout
    assert not blobs.path_of(orphan).exists() and not tmp.exists()
    assert blobs.get(referenced) == b"kept bytes"


def test_gc_leaves_young_files_alone(engine, db_path: Path, blobs) -> None:
    orphan, _ = _orphans_and_referenced(engine, blobs)
    r = CliRunner().invoke(cli, ["--db", str(db_path), "gc"])  # default: only things older than an hour
    assert r.exit_code == 0 and "removed 0 item(s)" in r.stdout
    assert blobs.path_of(orphan).exists()


def test_gc_of_table_blobs_and_dead_sandbox_folders(engine, tmp_path: Path) -> None:
    blobs = TableBlobStore(engine)
    orphan, referenced = _orphans_and_referenced(engine, blobs)
    temp_root = tmp_path / "tmp"
    dead = temp_root / "chainmark-code-abc123"
    (dead / "sub").mkdir(parents=True)
    (dead / "sub" / "out.png").write_bytes(b"x")
    long_ago = time.time() - 60  # a folder this young might be one still being set up (no lock yet)
    os.utime(dead, (long_ago, long_ago))
    young = temp_root / "chainmark-tool-justmade"
    young.mkdir()
    other = temp_root / "someone-elses-folder"
    other.mkdir()
    with session_scope(engine) as s:
        garbage = find_garbage(s, blobs, min_age_s=0, temp_root=temp_root)
        assert garbage.orphan_blobs == [orphan] and garbage.temp_files == [dead]
        assert collect(s, blobs, garbage) == 2
    with session_scope(engine) as s:
        assert [b.sha256 for b in s.exec(select(Blob)).all()] == [referenced]
        assert s.exec(select(Asset)).one().sha256 == referenced
    assert not dead.exists() and other.exists() and young.exists()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_database_and_blob_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a common umask that would make both world-readable
    try:
        db = tmp_path / "new" / "chainmark.db"
        engine = make_engine(db)
        upgrade(engine)
        blobs = FolderBlobStore(db.with_name(db.name + ".blobs"))
        with session_scope(engine) as s:
            sha = put_asset(s, blobs, b"an image").sha256
        engine.dispose()
    finally:
        os.umask(old)
    assert _mode(db) == 0o600 and _mode(db.parent) == 0o700
    assert _mode(blobs.path_of(sha)) == 0o600
    assert _mode(blobs.path_of(sha).parent) == 0o700 and _mode(blobs.root) == 0o700


def test_gc_removes_the_disk_reserve_of_a_killed_run_only(engine, db_path: Path, blobs) -> None:
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = db_path.with_name(f"{db_path.name}.reserve-{dead.pid}-0")
    live = db_path.with_name(f"{db_path.name}.reserve-{os.getpid()}-3")
    stale.write_bytes(b"\0" * 10)
    live.write_bytes(b"\0" * 10)
    r = CliRunner().invoke(cli, ["--db", str(db_path), "gc", "--dry-run", "--min-age", "0"])
    assert f"would remove temp {stale}" in r.stdout and str(live) not in r.stdout
    live.unlink()
