"""A streamed GTA import: written batch by batch while dataset.json is read, yet all or nothing, with
errors that name file, record and field; shared files read once; ids right even when SQLite cannot
give consecutive ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from annotation.formats import FormatError, gta, read_ahead, writer
from annotation.formats.api import import_dataset
from annotation.formats.safe_files import DatasetRoot
from store import core_tables
from store.models import AuditEvent, Benchmark, ReferenceStep, Task, TaskAsset
from tests.formats.conftest import end_other_threads
from tests.formats.fixtures import png, write_gta


@pytest.fixture
def small_batches(monkeypatch) -> None:
    monkeypatch.setattr(writer, "BATCH", 2)  # several batches are written before the bad record is read


def _refused(engine, blobs, root: Path, counts) -> FormatError:
    before = counts()
    with pytest.raises(FormatError) as info:
        import_dataset(engine, blobs, "gta", root)
    assert counts() == before  # the batches written before the error were rolled back
    return info.value


def test_duplicate_key_deep_in_a_late_record_rolls_back_every_batch(
    engine, blobs, tmp_path: Path, counts, small_batches
) -> None:
    data = write_gta(tmp_path, n=8)
    data["6"]["dialogs"][1]["tool_calls"][0]["function"]["arguments"] = {"MARK": 1}
    text = json.dumps(data, indent=2).replace('"MARK": 1', '"bbox": "(1, 2)", "image": "a:b", "bbox": "(3, 4)"')
    (tmp_path / "dataset.json").write_text(text)
    err = _refused(engine, blobs, tmp_path, counts)
    assert (Path(err.file).name, err.record, err.field) == ("dataset.json", "6", "'bbox'")


def test_malformed_json_between_late_records_rolls_back(engine, blobs, tmp_path: Path, counts, small_batches) -> None:
    data = write_gta(tmp_path, n=8)
    text = json.dumps(data, indent=2).replace('\n  },\n  "7":', '\n  }\n  "7":')
    (tmp_path / "dataset.json").write_text(text)
    err = _refused(engine, blobs, tmp_path, counts)
    assert err.record == "after '6'" and "Expecting ',' delimiter" in err.message and "line " in err.message


def test_truncated_file_rolls_back(engine, blobs, tmp_path: Path, counts, small_batches) -> None:
    text = json.dumps(write_gta(tmp_path, n=8), indent=2)
    (tmp_path / "dataset.json").write_text(text[: len(text) - 40])
    err = _refused(engine, blobs, tmp_path, counts)
    assert Path(err.file).name == "dataset.json" and err.record == "7" and "not valid JSON" in err.message


def test_a_bad_field_in_a_late_record_rolls_back(engine, blobs, tmp_path: Path, counts, small_batches) -> None:
    data = write_gta(tmp_path, n=8)
    data["5"]["dialogs"][1]["tool_calls"][0]["function"]["name"] = 3
    (tmp_path / "dataset.json").write_text(json.dumps(data))
    err = _refused(engine, blobs, tmp_path, counts)
    assert (err.record, err.field) == ("5", "dialogs[1].tool_calls[0].function.name")


def test_the_stream_is_read_while_it_is_written(engine, blobs, tmp_path: Path, small_batches, monkeypatch) -> None:
    """Only a batch of parsed tasks is alive at a time: records are parsed after earlier batches went in."""
    write_gta(tmp_path, n=5)
    log: list[str] = []
    parse, insert = gta.parse_record, writer.insert_audited

    def parsing(key, record, file, root):
        log.append("parse")
        return parse(key, record, file, root)

    def inserting(conn, table, rows, *args, **kw):
        if table is core_tables.task:
            log.append(f"insert {len(rows)} tasks")
        return insert(conn, table, rows, *args, **kw)

    monkeypatch.setattr(gta, "parse_record", parsing)
    monkeypatch.setattr(writer, "insert_audited", inserting)
    summary = import_dataset(engine, blobs, "gta", tmp_path)
    assert summary.created == 5
    assert log == ["parse", "parse", "insert 2 tasks", "parse", "parse", "insert 2 tasks", "parse", "insert 1 tasks"]


def test_tasks_sharing_a_file_read_it_once(engine, blobs, tmp_path: Path, monkeypatch) -> None:
    data = write_gta(tmp_path, n=6)
    (tmp_path / "image" / "shared.png").write_bytes(png(3))
    for rec in data.values():
        rec["files"] = [{"type": "image", "path": "image/shared.png", "url": None}]
    (tmp_path / "dataset.json").write_text(json.dumps(data))
    reads: list[str] = []
    real = DatasetRoot.read

    def counting(self, path, *, image=False):
        reads.append(str(path))
        return real(self, path, image=image)

    monkeypatch.setattr(DatasetRoot, "read", counting)
    summary = import_dataset(engine, blobs, "gta", tmp_path)
    assert summary.created == 6 and summary.assets == 1
    assert [Path(p).name for p in reads] == ["toolmeta.json", "shared.png"]
    with Session(engine) as s:
        assert len(s.exec(select(TaskAsset)).all()) == 6


def test_ids_are_looked_up_when_sqlite_cannot_count_them(engine, blobs, tmp_path: Path, small_batches) -> None:
    """Tasks never reuse a deleted id (AUTOINCREMENT), so after a deletion the new ids do not follow the
    largest id left: the import notices and reads them back instead of counting."""
    with Session(engine) as s:
        bench = Benchmark(name="other", source_format="gta")
        s.add(bench)
        s.flush()
        gone = Task(benchmark_id=bench.id or 0, source_id="gone", query="q", answer_spec={"kind": "none"})
        s.add(gone)
        s.add(Task(benchmark_id=bench.id or 0, source_id="x", query="q", answer_spec={"kind": "none"}))
        s.commit()
        s.delete(s.exec(select(Task).where(Task.source_id == "x")).one())
        s.commit()
        deleted_id = (gone.id or 0) + 1
    data = write_gta(tmp_path, n=5)
    import_dataset(engine, blobs, "gta", tmp_path)
    with Session(engine) as s:
        tasks = {t.id: t for t in s.exec(select(Task).where(Task.source_id != "gone")).all()}
        assert sorted(t.source_id for t in tasks.values()) == sorted(data) and deleted_id not in tasks
        for step in s.exec(select(ReferenceStep)).all():
            rec = data[tasks[step.task_id].source_id]
            calls = [m for m in rec["dialogs"] if "tool_calls" in m]
            if step.tool_name:
                assert step.tool_name in {c["tool_calls"][0]["function"]["name"] for c in calls}
        created = s.exec(select(AuditEvent).where(AuditEvent.entity == "task", AuditEvent.action == "create")).all()
        assert {e.entity_id for e in created} >= set(tasks)
        for e in created:
            if e.entity_id in tasks:
                assert (e.after or {})["source_id"] == tasks[e.entity_id].source_id


@pytest.mark.parametrize("forked", [False, True], ids=["in-process", "read-ahead"])
def test_audit_events_come_kind_by_kind_on_both_databases(
    any_engine, tmp_path: Path, small_batches, monkeypatch, forked: bool
) -> None:
    """Batches write tasks and steps in turn; the audit trail still lists every task, then every step
    (also with dataset.json parsed in a forked child, on both databases)."""
    from store.blobs import FolderBlobStore, default_blob_store

    if forked:
        end_other_threads()
        monkeypatch.setattr(read_ahead, "FORK_MIN_BYTES", 0)
        monkeypatch.setattr(read_ahead, "FRAME_TASKS", 3)
    write_gta(tmp_path / "gta", n=7)
    blobs = default_blob_store(any_engine) if any_engine.dialect.name != "sqlite" else FolderBlobStore(tmp_path / "b")
    import_dataset(any_engine, blobs, "gta", tmp_path / "gta", actor="importer")
    with Session(any_engine) as s:
        events = s.exec(select(AuditEvent).where(AuditEvent.action == "create").order_by(col(AuditEvent.id))).all()
    kinds = [e.entity for e in events if e.entity in ("task", "referencestep")]
    assert kinds == sorted(kinds, key=["task", "referencestep"].index) and kinds.count("task") == 7
    for entity in ("task", "referencestep"):
        ids = [e.entity_id or 0 for e in events if e.entity == entity]
        assert ids == sorted(ids)
