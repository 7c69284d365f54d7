"""The record-by-record JSON reader: the values ``json.loads`` gives, wherever the chunks cut the text,
and errors that name the file, the record and the field, with ``json``'s own message and position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation.formats import json_stream
from annotation.formats.errors import FormatError
from annotation.formats.fingerprint import encode_record
from annotation.formats.json_stream import RecordReader
from annotation.formats.safe_files import DatasetRoot


def _read(path: Path, **kw: Any) -> list[tuple[Any, Any, str | None]]:
    return list(RecordReader(path, DatasetRoot(path.parent), encode_record, **kw))


def _write(tmp_path: Path, text: str | bytes, name: str = "data.json") -> Path:
    p = tmp_path / name
    if isinstance(text, str):
        p.write_text(text, encoding="utf-8")
    else:
        p.write_bytes(text)
    return p


def _json_error(text: str) -> str:
    """The message ``parse_json`` gives for the whole text (what an import said before it streamed)."""
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    e = info.value
    return f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})"


SAMPLE = {
    "0": {"q": "Combien ? 日本語 \u00e9 \U0001f600", "n": [1, -2.5e10, 12345678901234567890, None, True, False]},
    "1": {"s": "x" * 5000, "nested": {"deep": [{"a": "b:c"}, {"url": "https://x.invalid/a:b"}]}},
    "2": {"esc": 'quote " back \\ slash \u003a colon \\u003a not an escape \n\t \U0001f600'},
    "3": [],
    "4": 7,
}


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_values_and_texts_match_json_whatever_the_chunks(tmp_path: Path, monkeypatch, chunk: int, indent) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    text = json.dumps(SAMPLE, indent=indent, ensure_ascii=indent is None)
    got = _read(_write(tmp_path, text))
    assert [(k, v) for k, v, _ in got] == list(json.loads(text).items())
    assert [t for _, _, t in got] == [encode_record(v) for v in json.loads(text).values()]


@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
def test_a_top_level_array_gives_its_items_by_index(tmp_path: Path, monkeypatch, chunk: int) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    items = [{"a": 1}, "é" * 300, 12345, [1, [2]], None]
    got = _read(_write(tmp_path, json.dumps(items)), kinds=(list,))
    assert [(i, v) for i, v, _ in got] == list(enumerate(items))


def test_empty_object_and_whitespace(tmp_path: Path) -> None:
    assert _read(_write(tmp_path, " \n { \n } \n")) == []


def test_a_huge_string_across_many_chunks(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", 1024)
    big = "ü€" * 300_000 + "\\"
    got = _read(_write(tmp_path, json.dumps({"a": {"s": big}, "b": {"s": "after"}}, ensure_ascii=False)))
    assert got[0][1]["s"] == big and got[1][1] == {"s": "after"}


def test_duplicate_key_deep_inside_a_record_names_record_and_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", 16)
    text = '{"0": {"a": 1}, "1": {"d": [{"x": {"k": 1, "m": ":", "k": 2}}]}}'
    with pytest.raises(FormatError) as info:
        _read(_write(tmp_path, text))
    e = info.value
    assert (e.file.endswith("data.json"), e.record, e.field) == (True, "1", "'k'")
    assert "duplicate key" in e.message


def test_duplicate_top_level_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        _read(_write(tmp_path, '{"0": {}, "1": {}, "0": {}}'))
    assert (info.value.record, info.value.field) == (None, "'0'") and "duplicate key" in info.value.message


@pytest.mark.parametrize(
    "raw",
    [
        '{"a": "\\u003a", "b": 1}',  # an escaped colon in a string: no duplicate
        '{"a": "\\\\u003a", "b": 1}',  # a backslash and the text u003a: counted, then checked strictly
    ],
)
def test_colon_escapes_are_not_taken_for_duplicates(tmp_path: Path, raw: str) -> None:
    assert _read(_write(tmp_path, '{"r": ' + raw + "}"))[0][1] == json.loads(raw)


def test_escaped_colon_key_duplicating_a_plain_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        _read(_write(tmp_path, '{"r": {":": 1, "\\u003a": 2}}'))
    assert (info.value.record, info.value.field) == ("r", "':'")


BROKEN_AT_BOUNDARY = [
    ('{"0": {"a": 1} "1": {"a": 2}}', "after '0'"),  # missing comma between records
    ('{"0": {"a": 1},, "1": {}}', "after '0'"),
    ('{"0": {"a": 1}, 1: {}}', "after '0'"),  # a key that is not a string
    ('{"0": {"a": 1}, "1" {}}', "1"),  # no colon after the key
    ('{"0": {"a": 1}, "1": }', "1"),  # no value
    ('{"0": {"a": 1}}  x', None),  # text after the object
    ('{"0": {"a": [1, 2}}', "0"),  # inside a record
    ('{"0": {"a": "tab\there"}}', "0"),  # a raw control character in a string
    ('{"0": {"a": 1}, "1": {"b": tru}}', "1"),
]


@pytest.mark.parametrize("chunk", [2, 1 << 20])
@pytest.mark.parametrize("text,record", BROKEN_AT_BOUNDARY)
def test_malformed_json_names_file_record_and_json_position(
    tmp_path: Path, monkeypatch, chunk: int, text: str, record: str | None
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    text = text.replace("{", "{\n  ", 2)  # the position must count lines too
    with pytest.raises(FormatError) as info:
        _read(_write(tmp_path, text))
    e = info.value
    assert e.file.endswith("data.json") and e.record == record
    assert e.message == _json_error(text)


@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_every_truncation_is_refused_as_json_would(tmp_path: Path, monkeypatch, chunk: int) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    text = json.dumps({"0": {"s": "é:x", "n": [1.5, 10]}, "1": {"t": None}}, indent=1, ensure_ascii=False)
    for cut in range(len(text) - 1):
        partial = text[:cut]
        with pytest.raises(FormatError) as info:
            _read(_write(tmp_path, partial))
        assert info.value.message == _json_error(partial), partial


def test_not_an_object_says_what_is_wanted(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="keyed by sample index"):
        _read(_write(tmp_path, "[1, 2]"), what="must be a JSON object keyed by sample index")


def test_bom_is_refused_as_json_refuses_it(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="Unexpected UTF-8 BOM"):
        _read(_write(tmp_path, "\ufeff{}"))


@pytest.mark.parametrize("chunk", [1, 1 << 20])
def test_invalid_utf8_names_the_byte_in_the_whole_file(tmp_path: Path, monkeypatch, chunk: int) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", chunk)
    data = '{"0": {"a": "日本"}, "1": {"b": "'.encode() + b"\xe6\x97" + b'x"}}'
    with pytest.raises(FormatError) as info:
        _read(_write(tmp_path, data))
    bad = data.index(b"\xe6\x97x")
    assert info.value.message == f"not UTF-8 text (byte {bad})"


def test_a_link_out_of_the_root_and_a_fifo_are_refused(tmp_path: Path) -> None:
    import os

    outside = _write(tmp_path, '{"0": {}}', "outside.json")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.json").symlink_to(outside)
    with pytest.raises(FormatError, match="outside the dataset folder"):
        list(RecordReader(root / "link.json", DatasetRoot(root), encode_record))
    os.mkfifo(root / "fifo.json")
    with pytest.raises(FormatError, match="FIFO"):
        list(RecordReader(root / "fifo.json", DatasetRoot(root), encode_record))
