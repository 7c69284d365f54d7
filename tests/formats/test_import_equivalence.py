"""A GTA import stores exactly what the import stored before it was made to stream in batches: every
row of every table (audit trail included, in the same id order) and every blob file, for new tasks,
re-imported changed tasks and unchanged ones, whatever the batch size.

The expected digests were taken from the one-batch importer (commit 23a5615) on this same dataset;
timestamps are blanked (they are the import's clock), everything else is compared byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from annotation.formats import read_ahead, writer
from annotation.formats.api import import_dataset
from store import make_engine
from store.blobs import FolderBlobStore
from store.migrate import upgrade
from store.models import ALL_TABLES
from tests.formats.conftest import end_other_threads
from tests.formats.fixtures import png, write_gta

_TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")

# Digests of the dump after the first import and after the re-import (see the module docstring).
EXPECTED = (
    "f75d4a3ac3f2ed85af75fe40482a5e3146a0aad374d54dc2f9463506adc22fcf",
    "7a85ab65035da8c03cb22f54c98c5f79cc2a83c54f91493963076819ccffd8b4",
)


def _edge_records() -> dict[str, Any]:
    """Records the generated ones lack: non-ASCII and DEL text, string arguments, list results, no
    thought, shared images, two calls in one message, an empty final answer."""
    shared = {"type": "image", "path": "image/shared.png", "url": None}
    base = {"tools": [{"name": "OCR", "description": "é", "inputs": [], "outputs": []}], "files": [shared]}
    return {
        "u1": {
            **base,
            "dialogs": [
                {"role": "user", "content": "Combien de jours ? 日本 \u00e9\x7f"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"type": "function", "function": {"name": "OCR", "arguments": '{"image": "x"}'}},
                        {"type": "function", "function": {"name": "OCR", "arguments": {"k": [1, 2.5, None]}}},
                    ],
                },
                {"role": "tool", "name": "OCR", "content": [{"type": "text", "content": "a"}]},
                {"role": "tool", "name": "OCR", "content": "plain ü"},
                {"role": "assistant", "content": ""},
            ],
            "gt_answer": ["r1", "r2"],
            "extra": {"nested": {"deep": [True, False, None]}},
        },
        "u2": {
            **base,
            "dialogs": [
                {"role": "user", "content": "DEL \x7f only"},
                {"role": "assistant", "content": None, "thought": "t"},
            ],
            "gt_answer": None,
        },
        "u3": {
            **base,
            "files": [shared, {"type": "file", "path": "image/shared.png", "url": "https://x.invalid/é"}],
            "dialogs": [
                {"role": "user", "content": "numbers"},
                {
                    "role": "assistant",
                    "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {}}}],
                    "thought": None,
                },
                {"role": "tool", "name": "OCR", "content": {"type": "number", "content": 3.25}},
                {"role": "assistant", "content": "3"},
            ],
            "gt_answer": {"whitelist": [["3", "three"]], "blacklist": [["4"]]},
        },
    }


def _write_dataset(root: Path, n: int, changed: bool = False) -> None:
    data = write_gta(root, n=n)
    data.update(_edge_records())
    (root / "image" / "shared.png").write_bytes(png(7))
    if changed:  # a re-import: two tasks changed, one gone from the file, one new
        data["1"]["dialogs"][0]["content"] += " (revised)"
        data["u1"]["gt_answer"] = ["r1"]
        del data["2"]
        data["new"] = {**data["u3"], "gt_answer": None}
    (root / "dataset.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def _dump(engine: sa.Engine, blobs: Path) -> str:
    lines = []
    with engine.connect() as conn:
        for model in ALL_TABLES:
            table: sa.Table = model.__table__  # type: ignore[attr-defined]
            order = ", ".join(f'"{c.name}"' for c in (list(table.primary_key.columns) or list(table.columns)))
            # The stored values as the driver hands them back (JSON as its text), not decoded.
            for row in conn.exec_driver_sql(f'SELECT * FROM "{table.name}" ORDER BY {order}'):
                lines.append(table.name + " " + _TIME.sub("<T>", repr(tuple(row))))
    for f in sorted(p for p in blobs.rglob("*") if p.is_file()):
        lines.append(f"blob {f.relative_to(blobs)} {hashlib.sha256(f.read_bytes()).hexdigest()}")
    return "\n".join(lines)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(("batch", "forked"), [(None, False), (3, False), (None, True), (3, True)])
def test_import_and_reimport_store_the_same_rows_and_blobs(
    tmp_path: Path, monkeypatch, batch: int | None, forked: bool
) -> None:
    if batch is not None and hasattr(writer, "BATCH"):
        monkeypatch.setattr(writer, "BATCH", batch)
    if forked:  # dataset.json parsed in a child process (read_ahead), two tasks to a frame
        end_other_threads()
        monkeypatch.setattr(read_ahead, "FORK_MIN_BYTES", 0)
        monkeypatch.setattr(read_ahead, "FRAME_TASKS", 2)
        forks = _count_forks(monkeypatch)
    engine = make_engine(tmp_path / "t.db")
    upgrade(engine)
    blobs = FolderBlobStore(tmp_path / "t.db.blobs")
    _write_dataset(tmp_path / "a", 9)
    import_dataset(engine, blobs, "gta", tmp_path / "a", actor="importer")
    first = _dump(engine, tmp_path / "t.db.blobs")
    _write_dataset(tmp_path / "b", 9, changed=True)
    import_dataset(engine, blobs, "gta", tmp_path / "b", actor="importer")
    second = _dump(engine, tmp_path / "t.db.blobs")
    assert (_digest(first), _digest(second)) == EXPECTED
    if forked:
        assert forks == [1, 1]  # both imports were read ahead (the test proves nothing otherwise)


def _count_forks(monkeypatch) -> list[int]:
    """One entry per import that started a read-ahead child."""
    started: list[int] = []
    real = read_ahead.ReadAhead.__init__

    def init(self, *args, **kw):
        real(self, *args, **kw)
        started.append(1)

    monkeypatch.setattr(read_ahead.ReadAhead, "__init__", init)
    return started
