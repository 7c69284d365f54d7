"""What a re-import compares: a hash of everything a task's import depends on.

The hash covers the source record verbatim, the meta the format module derived and the files (by
sha256), so an unchanged task is recognised and left alone. The record is the bulk of that text, and
the task row stores the same record as JSON: when both serializations are the same string (a record
of printable ASCII) it is made once and handed to the insert as ``JsonText``.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Callable

from annotation.formats.base import TaskSpec
from annotation.formats.bulk import JsonText, make_dumps

FINGERPRINT_VERSION = 1  # bump when a format module maps records differently, so re-imports refresh
# What json.dumps(..., ensure_ascii=False[, default=str]) does, with encoders made once per thread.
_local = threading.local()  # one pair of encoders per thread: an encoder's circular-reference check is its own


def _encoders() -> tuple[Callable[[Any], str], Callable[[Any], str]]:
    try:
        return _local.pair
    except AttributeError:
        _local.pair = (make_dumps(ensure_ascii=False), make_dumps(ensure_ascii=False, default=str))
        return _local.pair


def encode_record(record: Any) -> str:
    """``json.dumps(record, ensure_ascii=False)``: a reader that encodes each record as it parses it
    hands the text on to ``fingerprint``."""
    return _encoders()[0](record)


def fingerprint(spec: TaskSpec) -> tuple[str, Any]:
    """``(hash, record as the task row takes it)``.

    The hash is ``sha256(json.dumps([version, record, meta, files], ensure_ascii=False, default=str))``,
    written out piece by piece so the record's text can be kept. ``spec.record_text``, when the reader
    made it, is that encoding of the record already.
    """
    _plain, _lenient = _encoders()
    files = [[a.sha256, a.original_path, a.role, a.url, a.document_index] for a in spec.assets]
    try:
        record_text = spec.record_text if spec.record_text is not None else _plain(spec.record)
    except (TypeError, ValueError):  # not plain JSON: hash as before; the insert reports the problem
        body = [FINGERPRINT_VERSION, spec.record, spec.fields.get("meta"), files]
        return _sha(_lenient(body)), spec.record
    text = (
        "["
        + ", ".join((str(FINGERPRINT_VERSION), record_text, _lenient(spec.fields.get("meta")), _lenient(files)))
        + "]"
    )
    # json.dumps escapes everything outside printable ASCII (DEL included) only with ensure_ascii on.
    same_when_ascii = record_text.isascii() and "\x7f" not in record_text
    return _sha(text), JsonText(spec.record, record_text) if same_when_ascii else spec.record


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
