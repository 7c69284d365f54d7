"""ISG and ATP-Bench imports read their JSONL a line at a time while they write (and a big file is parsed
in a forked child, ``read_ahead``): every row, the audit trail and the blobs are what the whole-file
importer stored, and an error in a late line rolls back every batch and names the line and the field.

The expected digests were taken with the importer that parsed the whole file first (commit 7f1196f) on
these same datasets; timestamps are blanked, everything else is compared byte for byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotation.formats import FormatError, isg, read_ahead, writer
from annotation.formats.api import import_dataset
from annotation.formats.writer import ImportSummary
from store import core_tables
from tests.formats.conftest import end_other_threads
from tests.formats.fixtures import write_atp, write_isg
from tests.formats.test_import_equivalence import _count_forks, _digest, _dump

N = 14
EXPECTED = {
    "isg": "a78a66476a1532fe8fb96cceeed32aa504b04c7000ef5545ac29b07a6d8eaac8",
    "atp": "2baa47e5a24ab0d7d645b9a2ea8f00fa245ef98d059b59f2e636d7a64542ed43",
}
NOTES = {
    "isg": [
        "1 line(s) carry model output; it was not imported as task data (use `chainmark import-run isg` for predictions)"
    ],
    "atp": [],
}


def write_jsonl(fmt: str, root: Path, n: int = N) -> Path:
    """``n`` lines with what the fixtures lack: non-ASCII text, CRLF and LF line ends, blank lines, a
    line carrying model output (ISG), an image shared by two lines."""
    if fmt == "isg":
        lines = write_isg(root, n)
        lines[3]["Query"][0]["content"] = "Que se passe-t-il ? 日本 é\x7f"
        lines[5]["output"] = [{"type": "text", "content": "model text"}]
        lines[7]["Golden"][1]["content"] = lines[6]["Golden"][1]["content"]
        name = "ISG-Bench.jsonl"
    else:
        lines = write_atp(root, n)
        lines[3]["query"] = "Comment monter l'étagère ? 日本"
        lines[7]["images"] = list(lines[6]["images"])
        name = "data.jsonl"
    text = ""
    for i, line in enumerate(lines):
        text += json.dumps(line, ensure_ascii=False) + ("\r\n" if i % 2 else "\n")
        if i % 5 == 4:
            text += "\n   \n"
    (root / name).write_bytes(text.encode("utf-8"))
    return root


def _import(engine, blobs, fmt: str, root: Path, *, forked: bool, monkeypatch) -> tuple[ImportSummary, list[int]]:
    forks = _count_forks(monkeypatch)
    if forked:
        end_other_threads()
        monkeypatch.setattr(read_ahead, "FORK_MIN_BYTES", 0)
        monkeypatch.setattr(read_ahead, "FRAME_TASKS", 3)
    return import_dataset(engine, blobs, fmt, root, actor="importer"), forks


@pytest.mark.parametrize("forked", [False, True], ids=["in-process", "forked"])
@pytest.mark.parametrize("fmt", ["isg", "atp"])
def test_streamed_jsonl_import_stores_what_the_whole_file_import_stored(
    engine, blobs, db_path: Path, tmp_path: Path, monkeypatch, fmt: str, forked: bool
) -> None:
    monkeypatch.setattr(writer, "BATCH", 4)  # several batches
    summary, forks = _import(
        engine, blobs, fmt, write_jsonl(fmt, tmp_path / "d"), forked=forked, monkeypatch=monkeypatch
    )
    assert summary.created == N and summary.notes == NOTES[fmt]
    assert forks == ([1] if forked else [])
    assert _digest(_dump(engine, db_path.with_name(db_path.name + ".blobs"))) == EXPECTED[fmt]


@pytest.mark.parametrize("forked", [False, True], ids=["in-process", "forked"])
@pytest.mark.parametrize(
    ("fmt", "breaks", "record", "field"),
    [
        ("isg", lambda line: line["Golden"][1].update(type="video"), "line 31 (id 0022)", "Golden[1].type"),
        ("atp", lambda line: line.update(query=7), "line 31 (trace_id trace-22)", "query"),
    ],
)
def test_a_bad_field_in_a_late_line_rolls_back_everything_and_names_it(
    engine, blobs, tmp_path: Path, counts, monkeypatch, fmt: str, breaks, record: str, field: str, forked: bool
) -> None:
    monkeypatch.setattr(writer, "BATCH", 4)  # six batches are written before the bad line is read
    root = write_jsonl(fmt, tmp_path / "d", n=30)
    name = "ISG-Bench.jsonl" if fmt == "isg" else "data.jsonl"
    raw = (root / name).read_bytes().split(b"\n")
    lineno = int(record.split()[1])
    line = json.loads(raw[lineno - 1])
    breaks(line)
    raw[lineno - 1] = json.dumps(line, ensure_ascii=False).encode() + b"\r"
    (root / name).write_bytes(b"\n".join(raw))
    before = counts()
    with pytest.raises(FormatError) as info:
        _import(engine, blobs, fmt, root, forked=forked, monkeypatch=monkeypatch)
    assert (Path(info.value.file).name, info.value.record, info.value.field) == (name, record, field)
    assert counts() == before


@pytest.mark.parametrize("forked", [False, True], ids=["in-process", "forked"])
def test_malformed_json_in_a_late_line_rolls_back(engine, blobs, tmp_path: Path, counts, monkeypatch, forked) -> None:
    monkeypatch.setattr(writer, "BATCH", 4)
    root = write_jsonl("isg", tmp_path / "d", n=30)
    text = (root / "ISG-Bench.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    text[30] = text[30].replace('"Category": ', '"Category" ', 1)
    (root / "ISG-Bench.jsonl").write_text("".join(text), encoding="utf-8")
    before = counts()
    with pytest.raises(FormatError) as info:
        _import(engine, blobs, "isg", root, forked=forked, monkeypatch=monkeypatch)
    assert info.value.record == "line 31" and "Expecting ':' delimiter" in info.value.message
    assert counts() == before


def test_a_reader_process_that_dies_fails_the_import_and_writes_nothing(
    engine, blobs, tmp_path: Path, counts, monkeypatch
) -> None:
    monkeypatch.setattr(writer, "BATCH", 4)
    root = write_jsonl("isg", tmp_path / "d", n=30)
    prepare = writer._Prepare.__call__

    def dying(self, t):
        if t.source_id == "0020":  # (runs in the child: the parent never sees this task)
            os._exit(3)
        prepare(self, t)

    monkeypatch.setattr(writer._Prepare, "__call__", dying)
    before = counts()
    with pytest.raises(RuntimeError, match="ended before its end"):
        _import(engine, blobs, "isg", root, forked=True, monkeypatch=monkeypatch)
    assert counts() == before


def test_isg_lines_are_read_while_the_tasks_are_written(engine, blobs, tmp_path: Path, monkeypatch) -> None:
    """Only a batch of parsed tasks is alive at a time: lines are parsed after earlier batches went in."""
    monkeypatch.setattr(writer, "BATCH", 2)
    write_isg(tmp_path, 5)
    log: list[str] = []
    parse, insert = isg.parse_record, writer.insert_audited

    def parsing(*args):
        log.append("parse")
        return parse(*args)

    def inserting(conn, table, rows, *args, **kw):
        if table is core_tables.task:
            log.append(f"insert {len(rows)} tasks")
        return insert(conn, table, rows, *args, **kw)

    monkeypatch.setattr(isg, "parse_record", parsing)
    monkeypatch.setattr(writer, "insert_audited", inserting)
    assert import_dataset(engine, blobs, "isg", tmp_path).created == 5
    assert log == ["parse", "parse", "insert 2 tasks", "parse", "parse", "insert 2 tasks", "parse", "insert 1 tasks"]
