"""Reading one big JSON file record by record: the members of its top-level object (or the items of its
top-level array), each decoded as soon as its text is in, so an import holds one record at a time
instead of the whole parsed file.

Built on ``json``'s own C scanner (``raw_decode``, ``scanstring``) over chunks of the file: a record is
decoded when its whole text is in the buffer (a failure near the end of the buffer reads more and tries
again, with reads growing as the record does, so a record of any size costs linear time). Errors are
the ``json`` module's own messages with the line and column in the whole file, naming the record they
are in (or the record before, at a boundary between two).

Repeated keys are refused without an ``object_pairs_hook`` (a Python call per object, which cost more
than the decoding): the caller encodes each record anyway (its fingerprint), and an object that lost a
repeated key has fewer ``:`` separators in that text than the record's source has outside strings.
Counting both is cheap; only a record whose counts differ is decoded again with the strict hook, which
names the key.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Callable

from annotation.formats.errors import FormatError
from annotation.formats.safe_files import (
    DatasetRoot,
    DuplicateKey,
    loads_strict,
    open_regular,
    refusals_as_format_errors,
)

CHUNK = 1 << 20  # characters decoded per read
_WS = re.compile(r"[ \t\n\r]*")
_NEAR_END = 16  # an error this close to the buffer's end may only be the record being cut off there
_DUPLICATE = "duplicate key in a JSON object (the earlier value would be silently dropped); remove one of them"

Encode = Callable[[Any], str]


class _Source:
    """The file's text, decoded chunk by chunk; ``buf`` holds what is not consumed yet."""

    def __init__(self, path: str, fd: int, cap: int):
        self.path = path
        self.fd = fd
        self.cap = cap
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.bytes_read = 0
        self.eof = False
        self.buf = ""
        self.lines_before = 0  # newlines in the text dropped from the front of ``buf``
        self.col_before = 0  # characters after the last of them (when ``buf`` has no newline yet)

    def more(self, at_least: int = 0) -> bool:
        """Append at least ``at_least`` (and one chunk) more characters, fewer at the end of the file;
        False at its end."""
        if self.eof:
            return False
        at_least = max(at_least, CHUNK)
        grown = 0
        while grown < at_least and not self.eof:
            data = os.read(self.fd, max(at_least - grown, CHUNK))
            self.eof = not data
            if len(data) + self.bytes_read > self.cap:
                raise FormatError(self.path, message=f"is over the {_size(self.cap)} limit")
            pending = len(self.decoder.getstate()[0])
            try:
                text = self.decoder.decode(data, final=self.eof)
            except UnicodeDecodeError as exc:
                at = self.bytes_read - pending + exc.start
                raise FormatError(self.path, message=f"not UTF-8 text (byte {at})") from None
            self.bytes_read += len(data)
            self.buf += text
            grown += len(text)
        return True

    def drop(self, upto: int) -> None:
        """Forget the text before ``upto`` (kept: the line and column where the rest starts)."""
        head = self.buf[:upto]
        nl = head.count("\n")
        if nl:
            self.lines_before += nl
            self.col_before = upto - head.rindex("\n") - 1
        else:
            self.col_before += upto
        self.buf = self.buf[upto:]

    def where(self, pos: int) -> str:
        """``line L, column C`` of buffer position ``pos`` in the whole file (as ``json`` counts them)."""
        nl = self.buf.count("\n", 0, pos)
        if nl:
            col = pos - self.buf.rindex("\n", 0, pos)
        else:
            col = self.col_before + pos + 1
        return f"line {self.lines_before + nl + 1}, column {col}"


def _open(path: str, root: DatasetRoot) -> int:
    """A descriptor on the data file (refusals as ``safe_files.open_regular``, worded as FormatErrors)."""
    with refusals_as_format_errors(path):
        fd, _ = open_regular(path, root.real, root.limits.file_bytes)
    return fd


class TextChunks:
    """A data file's text a chunk at a time (``with TextChunks(path, root) as c: c.read()``), with the
    checks and messages of reading it whole: regular file inside the root, the size cap, UTF-8."""

    def __init__(self, path: str | os.PathLike[str], root: DatasetRoot):
        self.path = os.fspath(path)
        self.root = root
        self._src: _Source | None = None

    def __enter__(self) -> TextChunks:
        self._src = _Source(self.path, _open(self.path, self.root), self.root.limits.file_bytes)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._src is not None:
            os.close(self._src.fd)
            self._src = None

    def read(self, at_least: int = 0) -> str:
        """The next piece of text, at least ``at_least`` characters (and a chunk) unless the file ends
        first; '' at its end."""
        src = self._src
        assert src is not None, "use TextChunks in a with block"
        while src.more(at_least):
            text, src.buf = src.buf, ""
            if text:
                return text
        return ""


def _size(n: int) -> str:
    mb = 1024 * 1024
    return f"{n / mb:.1f} MB" if n >= mb else f"{n} bytes"


class RecordReader:
    """``for key, value, text in RecordReader(...)``: the top-level members in file order.

    ``text`` is ``encode(value)`` (made here for the duplicate check; the caller keeps it instead of
    encoding again), or None if the value could not be encoded. Keys are strings for an object, item
    indexes for an array (``kinds`` says which top-level values are accepted).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        root: DatasetRoot,
        encode: Encode,
        *,
        kinds: tuple[type, ...] = (dict,),
        what: str = "must be a JSON object",
    ):
        self.path = os.fspath(path)
        self.root = root
        self.encode = encode
        self.kinds = kinds
        self.what = what
        self.decoder = json.JSONDecoder()

    def __iter__(self) -> Iterator[tuple[Any, Any, str | None]]:
        fd = _open(self.path, self.root)
        try:
            yield from self._members(_Source(self.path, fd, self.root.limits.file_bytes))
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ the grammar around records

    def _members(self, src: _Source) -> Iterator[tuple[Any, Any, str | None]]:
        src.more()
        if src.buf.startswith("\ufeff"):
            raise self._syntax(src, None, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
        pos = self._skip(src, 0)
        if pos >= len(src.buf):
            raise self._syntax(src, None, "Expecting value", pos)
        opener = src.buf[pos]
        if opener == "{" and dict in self.kinds:
            yield from self._object(src, pos + 1)
        elif opener == "[" and list in self.kinds:
            yield from self._array(src, pos + 1)
        else:
            value, _ = self._value(src, pos, None)  # a valid document of the wrong kind says what is wanted
            raise FormatError(self.path, message=self.what)
        pos = self._skip(src, 0)
        if pos < len(src.buf):
            raise self._syntax(src, None, "Extra data", pos)

    def _object(self, src: _Source, pos: int) -> Iterator[tuple[Any, Any, str | None]]:
        seen: set[str] = set()
        prev: str | None = None
        pos = self._skip(src, pos)
        if self._peek(src, pos) == "}":
            src.drop(pos + 1)
            return
        while True:
            if self._peek(src, pos) != '"':
                raise self._syntax(src, _after(prev), "Expecting property name enclosed in double quotes", pos)
            key, pos = self._key(src, pos, prev)
            if key in seen:
                raise FormatError(self.path, None, repr(key), _DUPLICATE)
            seen.add(key)
            pos = self._skip(src, pos)
            if self._peek(src, pos) != ":":
                raise self._syntax(src, key, "Expecting ':' delimiter", pos)
            pos = self._skip(src, pos + 1)
            value, text, pos = self._record(src, pos, key)
            yield key, value, text
            del value, text
            prev = key
            pos = self._skip(src, pos)
            c = self._peek(src, pos)
            if c == "}":
                src.drop(pos + 1)
                return
            if c != ",":
                raise self._syntax(src, _after(prev), "Expecting ',' delimiter", pos)
            pos = self._skip(src, pos + 1)

    def _array(self, src: _Source, pos: int) -> Iterator[tuple[Any, Any, str | None]]:
        pos = self._skip(src, pos)
        if self._peek(src, pos) == "]":
            src.drop(pos + 1)
            return
        index = 0
        while True:
            value, text, pos = self._record(src, pos, index)
            yield index, value, text
            del value, text
            pos = self._skip(src, pos)
            c = self._peek(src, pos)
            if c == "]":
                src.drop(pos + 1)
                return
            if c != ",":
                raise self._syntax(src, _after(index), "Expecting ',' delimiter", pos)
            index += 1
            pos = self._skip(src, pos + 1)

    # ------------------------------------------------------------------ pieces

    def _peek(self, src: _Source, pos: int) -> str:
        """The character at ``pos`` ('' at the end of the file), reading more if needed."""
        while pos >= len(src.buf):
            if not src.more():
                return ""
        return src.buf[pos]

    def _skip(self, src: _Source, pos: int) -> int:
        """Past whitespace from ``pos``, reading more while the buffer ends in it."""
        buf = src.buf
        if pos < len(buf) and buf[pos] not in " \t\n\r":  # the common case: no whitespace at all
            return pos
        while True:
            end = _WS.match(src.buf, pos).end()  # type: ignore[union-attr]
            if end < len(src.buf) or not src.more():
                return end

    def _key(self, src: _Source, pos: int, prev: str | None) -> tuple[str, int]:
        while True:
            try:
                return scanstring(src.buf, pos + 1)
            except json.JSONDecodeError as exc:
                if self._maybe_cut(src, exc) and src.more(len(src.buf)):
                    continue
                raise self._syntax(src, _after(prev), exc.msg, exc.pos) from None

    def _value(self, src: _Source, pos: int, record: object) -> tuple[Any, int]:
        """One JSON value starting at ``pos``, once all of it is in the buffer."""
        while True:
            try:
                value, end = self.decoder.raw_decode(src.buf, pos)
            except json.JSONDecodeError as exc:
                if self._maybe_cut(src, exc) and src.more(len(src.buf) - pos):
                    continue
                raise self._syntax(src, record, exc.msg, exc.pos) from None
            except RecursionError:
                raise FormatError(self.path, record, None, "JSON nested too deeply") from None
            if end < len(src.buf) or not src.more(len(src.buf) - pos):  # a number may go on past the buffer
                return value, end

    def _record(self, src: _Source, pos: int, key: object) -> tuple[Any, str | None, int]:
        """A record's value, its encoded text, and where it ends; the text before it is dropped."""
        if pos > CHUNK:  # keep the buffer about one chunk beyond the record being decoded
            src.drop(pos)
            pos = 0
        value, end = self._value(src, pos, key)
        try:
            text: str | None = self.encode(value)
        except (ValueError, TypeError, RecursionError):
            text = None
        if text is None or _separators(src.buf, pos, end) != text.count(":"):
            self._refuse_duplicates(src.buf[pos:end], key)
        return value, text, end

    def _refuse_duplicates(self, raw: str, key: object) -> None:
        """Decode ``raw`` again with the strict hook; a repeated key is an error naming the record."""
        try:
            loads_strict(raw)
        except DuplicateKey as exc:
            raise FormatError(self.path, key, repr(exc.key), _DUPLICATE) from None
        except RecursionError:
            raise FormatError(self.path, key, None, "JSON nested too deeply") from None

    @staticmethod
    def _maybe_cut(src: _Source, exc: json.JSONDecodeError) -> bool:
        """Could the error be the buffer ending mid-value rather than bad JSON?"""
        if src.eof:
            return False
        return exc.pos >= len(src.buf) - _NEAR_END or exc.msg.startswith("Unterminated string")

    def _syntax(self, src: _Source, record: object, msg: str, pos: int) -> FormatError:
        return FormatError(self.path, record, None, f"not valid JSON: {msg} ({src.where(pos)})")


def _after(prev: object) -> str | None:
    """How a boundary error names its place: after the last good record (None: before the first)."""
    return None if prev is None else f"after {prev!r}"


def _separators(buf: str, start: int, end: int) -> int:
    """``:`` characters of ``buf[start:end]`` as a decoded value shows them: escaped ones count too.

    (``\\u003a`` inside ``\\\\u003a`` is counted although it is no escape: that can only make the
    counts differ, and a difference is then checked with the strict decoder.)
    """
    return buf.count(":", start, end) + buf.count("\\u003a", start, end) + buf.count("\\u003A", start, end)
