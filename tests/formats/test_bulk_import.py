"""The bulk import's shortcuts store exactly what the plain way would: audit rows equal to the rows they
describe (SQLite and PostgreSQL), JSON texts equal to ``json.dumps``, fingerprints equal to one
``json.dumps`` of the whole body."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlmodel import Session, select

from annotation.formats.api import import_dataset
from annotation.formats.base import AssetSpec, TaskSpec, gc_paused
from annotation.formats.bulk import AUDIT_NOTES, JsonText, _audit_texts
from annotation.formats.fingerprint import FINGERPRINT_VERSION, fingerprint
from store.blobs import FolderBlobStore, default_blob_store
from store.models import AuditEvent, ReferenceStep, Task
from tests.formats.fixtures import write_gta, write_mme
from tests.support.must import must

AUDITED_IMPORT = {"task": Task, "referencestep": ReferenceStep}


def _as_audited(key: str, value: Any) -> Any:
    if key in AUDIT_NOTES:
        return AUDIT_NOTES[key]
    return value.isoformat() if isinstance(value, datetime) else value


def _instant(text: str) -> datetime:
    t = datetime.fromisoformat(text)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)  # SQLite hands stored UTC back without a zone


def _same_row(after: dict[str, Any], row: Any) -> None:
    """The event holds every column of the row as created (timestamps compared as instants)."""
    expected = {c.name: _as_audited(c.name, getattr(row, c.name)) for c in type(row).__table__.columns}
    assert set(after) == set(expected)
    for key, value in expected.items():
        if isinstance(getattr(row, key), datetime):
            assert _instant(after[key]) == _instant(value), key
        else:
            assert after[key] == value, key


def test_every_imported_row_has_one_create_event_equal_to_it(any_engine, tmp_path: Path) -> None:
    write_gta(tmp_path / "gta", n=8)
    blobs = default_blob_store(any_engine) if any_engine.dialect.name != "sqlite" else FolderBlobStore(tmp_path / "b")
    import_dataset(any_engine, blobs, "gta", tmp_path / "gta", actor="importer")
    with Session(any_engine) as s:
        for entity, model in AUDITED_IMPORT.items():
            rows = {r.id: r for r in s.exec(select(model)).all()}
            events = s.exec(select(AuditEvent).where(AuditEvent.entity == entity)).all()
            assert sorted(e.entity_id for e in events) == sorted(rows)
            for e in events:
                assert (e.actor, e.action, e.before) == ("importer", "create", None)
                _same_row(must(e.after), rows[e.entity_id])


def test_import_with_checkpoints_and_orderings_round_trips_on_both_databases(any_engine, tmp_path: Path) -> None:
    write_mme(tmp_path / "mme", 3)
    blobs = default_blob_store(any_engine) if any_engine.dialect.name != "sqlite" else FolderBlobStore(tmp_path / "b")
    first = import_dataset(any_engine, blobs, "agentic-mme", tmp_path / "mme")
    again = import_dataset(any_engine, blobs, "agentic-mme", tmp_path / "mme")
    assert (first.created, again.unchanged) == (3, 3)
    with Session(any_engine) as s:
        counts = dict(s.exec(select(AuditEvent.entity, sa.func.count()).group_by(AuditEvent.entity)).all())
    assert counts["task"] == 3 and counts["checkpoint"] == first.checkpoints


def _audit_case() -> tuple[list[str], list[dict[str, Any]]]:
    now = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc)
    rows = [
        {
            "task_id": 3,
            "ordinal": 0,
            "thought": 'say "hi"\n\tüñ€ \x7f \x00',
            "is_final": False,
            "weight": 1.5,
            "tool_args": {"b": [1, 2.5, None, True], "a": "é"},
            "result": None,
            "recorded_at": now,
            "source_record": {"anything": 1},
            "meta": {},
        },
        {
            "task_id": 4,
            "ordinal": 1,
            "thought": None,
            "is_final": True,
            "weight": float("inf"),
            "tool_args": JsonText(["x"], json.dumps(["x"])),
            "result": "plain text",
            "recorded_at": now,
            "source_record": None,
            "meta": {"dialog_index": 2},
        },
    ]
    return list(rows[0]), rows


def test_audit_texts_are_json_dumps_of_the_rows() -> None:
    cols, rows = _audit_case()
    json_cols = {"tool_args", "result", "source_record", "meta"}
    table = sa.Table("t", sa.MetaData(), *(sa.Column(c, sa.JSON if c in json_cols else sa.String) for c in cols))
    columns = [
        [(str.__str__(r[c]) if type(r[c]) is JsonText else json.dumps(r[c])) if c in json_cols else r[c] for r in rows]
        for c in cols
    ]
    texts = _audit_texts(table, cols, rows, columns, [11, 12])
    for text, row, rid in zip(texts, rows, [11, 12]):
        plain = {k: v.value if type(v) is JsonText else v for k, v in row.items()}
        assert text == json.dumps({"id": rid, **{k: _as_audited(k, v) for k, v in plain.items()}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    record=json_values,
    meta=st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    extra=st.sampled_from(["", "ü", "\x7f", "\x1f", "中文", "\u2028"]),
)
def test_fingerprint_is_the_hash_of_one_json_dumps(record: Any, meta: Any, extra: str) -> None:
    record = {"r": record, "x": extra}
    spec = TaskSpec("1", record, {"meta": meta}, assets=[AssetSpec(b"\x89PNG...", "image/a.png", url=None)])
    files = [[hashlib.sha256(b"\x89PNG...").hexdigest(), "image/a.png", "query_image", None, None]]
    body = [FINGERPRINT_VERSION, record, meta, files]
    fp, stored = fingerprint(spec)
    assert fp == hashlib.sha256(json.dumps(body, ensure_ascii=False, default=str).encode()).hexdigest()
    if type(stored) is JsonText:  # handed to the insert as text: must be what the column would store
        assert str.__str__(stored) == json.dumps(record) and stored.value is record
    else:
        assert stored is record


def test_fingerprint_of_a_record_that_is_not_plain_json_still_hashes() -> None:
    spec = TaskSpec("1", {"when": datetime(2024, 1, 1)}, {})
    fp, stored = fingerprint(spec)
    body = [FINGERPRINT_VERSION, spec.record, None, []]
    assert fp == hashlib.sha256(json.dumps(body, ensure_ascii=False, default=str).encode()).hexdigest()
    assert stored is spec.record


def test_gc_paused_restores_the_collector() -> None:
    import gc

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()


def test_gc_paused_hands_survivors_to_the_oldest_generation_and_keeps_a_programs_frozen_set() -> None:
    import gc

    with gc_paused():
        kept = [[i] for i in range(5000)]
    assert gc.get_count()[0] < 5000 and gc.get_freeze_count() == 0
    assert gc.is_tracked(kept[0])
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            more = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen  # not unfrozen behind the program's back
    finally:
        gc.unfreeze()
    assert len(more) == 100
