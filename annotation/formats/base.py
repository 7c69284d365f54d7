"""What every format module shares: the neutral task shape it parses into, file readers that raise
``FormatError`` naming file/record/field, and small helpers for safe relative paths.

A format module turns files into ``DatasetSpec`` (pure data, nothing written yet) and task bundles
back into files. Writing to the store lives in ``annotation.formats.writer`` so that every format gets
the same one-transaction, update-by-source-id behaviour.
"""

from __future__ import annotations

import functools
import json
import mimetypes
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator

from annotation.formats.errors import FormatError
from annotation.formats.json_stream import TextChunks
from annotation.formats.safe_files import (
    DatasetRoot,
    DuplicateKey,
    UnsafeFile,
    loads_keep_last,
    loads_strict,
    refusals_as_format_errors,
)
from store.blobs import sha256_of
from store.rubrics import RubricVersion
from store.gc_pause import gc_paused  # noqa: F401  (re-exported: the importers and their tests use it from here)

ROLES = ("query_image", "document_image", "golden", "evidence", "artifact")


@dataclass
class AssetSpec:
    """A file the task links to: bytes read at parse time, written back under ``original_path``."""

    data: bytes
    original_path: str
    role: str = "query_image"
    url: str | None = None
    document_index: int | None = None
    step_index: int | None = None
    known_sha256: str | None = field(default=None, repr=False, compare=False)  # when the reader hashed it

    @functools.cached_property
    def sha256(self) -> str:
        """The blob address of ``data``; an import needs it several times, so it is hashed once."""
        return self.known_sha256 or sha256_of(self.data)


@dataclass
class StepSpec:
    thought: str | None = None
    tool_name: str | None = None
    tool_args: Any = None
    result_text: str | None = None
    result: Any = None
    final_answer: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckpointSpec:
    key: str
    axis: str = "V"
    description: str | None = None
    tools: list[str] = field(default_factory=list)
    code_check: Any = None
    visual_check: Any = None
    search_check: Any = None
    answer_check: Any = None
    weight: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)
    step_index: int | None = None  # the reference step it checks (index into ``TaskSpec.steps``)
    gt_asset_index: int | None = None  # its ground-truth image (index into ``TaskSpec.assets``)


@dataclass
class OrderingSpec:
    key: str
    sequence: list[str]
    max_gap: int | None = None
    # Kept although it names checkpoints the task lacks: its format's evaluator scores it so (it never passes).
    as_read: bool = False


@dataclass
class DocumentSpec:
    text: str
    title: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskSpec:
    """One parsed task. ``fields`` are Task columns (query, category, answer_spec, …)."""

    source_id: str
    record: Any  # the source record, verbatim
    fields: dict[str, Any]
    steps: list[StepSpec] = field(default_factory=list)
    checkpoints: list[CheckpointSpec] = field(default_factory=list)
    orderings: list[OrderingSpec] = field(default_factory=list)
    documents: list[DocumentSpec] = field(default_factory=list)
    assets: list[AssetSpec] = field(default_factory=list)
    record_text: str | None = None  # the reader's ``fingerprint.encode_record(record)``, if it made it
    # ``(hash, record as the task row takes it)`` when worked out ahead (``read_ahead``'s child process).
    fingerprint: tuple[str, Any] | None = field(default=None, repr=False, compare=False)


@dataclass
class RubricLine:
    """A judge rubric version a dataset carries (chainmark's own folder), with where it was read, so a
    version the benchmark cannot take is refused naming file and record."""

    file: Path
    record: str
    rubric: RubricVersion


@dataclass
class DatasetSpec:
    tasks: list[TaskSpec]
    settings: dict[str, Any] = field(default_factory=dict)  # merged into Benchmark.settings[format]
    notes: list[str] = field(default_factory=list)
    rubrics: list[RubricLine] = field(default_factory=list)  # stored with the tasks, oldest version first


@dataclass
class DatasetStream:
    """A dataset read while it is imported: ``tasks`` parses the file record by record, so only the
    records not written yet are in memory; ``notes`` may grow until the iterator is exhausted."""

    tasks: Iterator[TaskSpec]
    settings: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    size: int = 0  # bytes of the data file(s) ``tasks`` reads, when known: big ones are read ahead in a child


@dataclass
class TaskBundle:
    """A stored task with everything an exporter needs, as plain attributes (rows detached)."""

    task: Any
    steps: list[Any]
    checkpoints: list[Any]
    orderings: list[Any]
    documents: list[Any]
    assets: list[tuple[Any, Any]]  # (TaskAsset, Asset)

    def assets_in(self, role: str) -> list[tuple[Any, Any]]:
        return sorted((p for p in self.assets if p[0].role == role), key=lambda p: p[0].ordinal)

    @property
    def verbatim(self) -> bool:
        """True when the task still holds exactly what was imported, so its source record is exported as is."""
        imported = (self.task.meta or {}).get("import") or {}
        return self.task.source_record is not None and imported.get("revision") == self.task.revision


# ------------------------------------------------------------------ readers


def as_root(root: Path | DatasetRoot | None, path: Path) -> DatasetRoot:
    """The import's root; a bare folder (or none: the file's own folder) gets the current limits."""
    if isinstance(root, DatasetRoot):
        return root
    return DatasetRoot(path.parent if root is None else root)


def read_bytes(path: Path, root: Path | DatasetRoot | None = None) -> bytes:
    """A data file under ``root`` (see ``safe_files``): regular, inside the root, under the size cap."""
    src = as_root(root, path)
    with refusals_as_format_errors(path):
        return src.read(path)


def read_text(path: Path, root: Path | DatasetRoot | None = None) -> str:
    data = read_bytes(path, root)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, message=f"not UTF-8 text (byte {exc.start})") from None


def parse_json(
    text: str, path: Path, root: DatasetRoot | None = None, *, keep_last: bool = False, record: object = None
) -> Any:
    """JSON whose objects may not repeat a key (the earlier value would be lost without a word).

    ``keep_last``: the file is kept verbatim and the reference reads the last value, so a repeated key is
    a warning on ``root`` instead of an error.
    """
    try:
        if keep_last:
            value, duplicated = loads_keep_last(text)
            if duplicated and root is not None:
                where = f"{path}" + (f": record {record}" if record is not None else "")
                root.warnings.append(
                    f"{where}: duplicate key(s) {', '.join(map(repr, duplicated))}; "
                    f"the last value of each is used, as the reference does"
                )
            return value
        return loads_strict(text)
    except DuplicateKey as exc:
        raise FormatError(
            path,
            record,
            repr(exc.key),
            "duplicate key in a JSON object (the earlier value would be silently dropped); remove one of them",
        ) from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}" if record is None else f"column {exc.colno}"
        raise FormatError(path, record, None, f"not valid JSON: {exc.msg} ({where})") from None
    except RecursionError:
        raise FormatError(path, record, None, "JSON nested too deeply") from None


def read_json_noting_duplicates(path: Path, root: Path | DatasetRoot | None = None) -> tuple[Any, list[str], list[str]]:
    """``read_json`` for files whose reference reads them with ``json.load`` (the last of a repeated key
    wins): the value, the keys repeated in the top-level object, and those repeated in nested objects."""
    text = read_text(path, as_root(root, path))
    duplicates: list[list[str]] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, int] = {}
        for k, _ in pairs:
            seen[k] = seen.get(k, 0) + 1
        duplicates.append([k for k, n in seen.items() if n > 1])
        return dict(pairs)

    try:
        value = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        raise FormatError(path, message=f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise FormatError(path, message="JSON nested too deeply") from None
    top = duplicates.pop() if isinstance(value, dict) and duplicates else []  # the outermost object closes last
    nested = sorted({k for keys in duplicates for k in keys})
    return value, top, nested


def read_json(path: Path, root: Path | DatasetRoot | None = None, *, keep_last: bool = False) -> Any:
    src = as_root(root, path)
    return parse_json(read_text(path, src), path, src, keep_last=keep_last)


def read_jsonl(path: Path, root: Path | DatasetRoot | None = None) -> list[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line; a line longer than the record cap is refused."""
    return list(iter_jsonl(path, root))


def iter_jsonl(path: Path, root: Path | DatasetRoot | None = None) -> Iterator[tuple[int, Any]]:
    """``read_jsonl`` a line at a time: the file is read in chunks, so only the lines not parsed yet
    are in memory. Lines are split as ``str.splitlines`` splits the whole text (the same line numbers,
    a ``\\r\\n`` across two chunks included: the last piece of a chunk waits for the next one)."""
    src = as_root(root, path)
    cap = src.limits.record_bytes
    n = 0
    with TextChunks(path, src) as chunks:
        pending = ""
        while True:
            chunk = chunks.read(len(pending))  # reads grow with a long line: linear time for any length
            pieces = (pending + chunk).splitlines(keepends=True) if chunk else [pending] if pending else []
            pending = pieces.pop() if chunk and pieces else ""
            for piece in pieces:
                n += 1
                line = piece.splitlines()[0]
                if not line.strip():
                    continue
                if len(line) > cap // 4 and len(line.encode("utf-8")) > cap:
                    raise FormatError(
                        path,
                        f"line {n}",
                        None,
                        f"the record is {len(line.encode())} bytes, over the {cap} byte record limit "
                        f"(CHAINMARK_MAX_RECORD_MB)",
                    )
                yield n, parse_json(line, path, src, record=f"line {n}")
            if not chunk:
                return


def type_name(value: Any) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        type(None): "null",
        int: "number",
        float: "number",
    }.get(type(value), type(value).__name__)


class Checker:
    """Field access for one record that raises FormatError naming file, record and field."""

    def __init__(self, file: Path | str, record: object):
        self.file = file
        self.record = record
        self.bytes_read = 0  # the record's files so far, against the per-record cap

    def charge(self, n: int, cap: int, field: str | None) -> None:
        """Count ``n`` more bytes of files for this record; refuse once they pass ``cap``."""
        self.bytes_read += n
        if self.bytes_read > cap:
            raise self.fail(
                field,
                f"the record's files come to {self.bytes_read} bytes, over the {cap} byte "
                f"record limit (CHAINMARK_MAX_RECORD_MB)",
            )

    def fail(self, field: str | None, message: str) -> FormatError:
        return FormatError(self.file, self.record, field, message)

    def get(
        self,
        obj: Any,
        key: str,
        types: type | tuple[type, ...],
        field: str,
        *,
        required: bool = True,
        default: Any = None,
    ) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(
                field.rsplit(".", 1)[0] if "." in field else None, f"must be an object, got {type_name(obj)}"
            )
        if key not in obj:
            if required:
                raise self.fail(field, "is missing")
            return default
        value = obj[key]
        if isinstance(value, types) and type(value) is not bool:  # the common case, without a second call
            return value
        return self.expect(value, types, field)

    def expect(self, value: Any, types: type | tuple[type, ...], field: str) -> Any:
        types_t = types if isinstance(types, tuple) else (types,)
        ok = isinstance(value, types_t) and not (isinstance(value, bool) and bool not in types_t)
        if not ok:
            wanted = " or ".join(type_name_of(t) for t in types_t)
            raise self.fail(field, f"must be {wanted}, got {type_name(value)}")
        return value


def type_name_of(t: type) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }.get(t, t.__name__)


def safe_relpath(rel: str, checker: Checker, field: str) -> str:
    """A dataset-relative path that stays inside the dataset (exports write files under it)."""
    if not rel or not rel.strip():
        raise checker.fail(field, "is an empty path")
    if _plain_relpath(rel):
        return rel
    p = PurePosixPath(rel.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts:
        raise checker.fail(field, f"path {rel!r} must be relative to the dataset folder and stay inside it")
    return str(p)


def _plain_relpath(rel: str) -> bool:
    """Already what ``safe_relpath`` makes of it: relative, forward slashes, no empty, ``.`` or ``..`` part."""
    return "\\" not in rel and not rel.startswith("/") and not any(p in ("", ".", "..") for p in rel.split("/"))


def read_asset(root: Path | DatasetRoot, rel: str, checker: Checker, field: str, *, image: bool = False) -> bytes:
    """Bytes of a dataset file; a missing or refused file (link out of the root, FIFO, device, over a size
    cap, an ``image`` Pillow cannot decode or with too many pixels) is a FormatError naming the field."""
    return read_asset_hashed(root, rel, checker, field, image=image)[0]


def read_asset_hashed(
    root: Path | DatasetRoot, rel: str, checker: Checker, field: str, *, image: bool = False
) -> tuple[bytes, str]:
    """``read_asset`` and the sha256 of the bytes. A file that earlier records of this import (same
    ``DatasetRoot``) named the same way is not read and hashed again (many tasks share one image)."""
    rel = safe_relpath(rel, checker, field)
    src = root if isinstance(root, DatasetRoot) else DatasetRoot(root)
    key = (rel, image)
    hit = src.files.get(key)
    if hit is None:
        try:
            data = src.read(os.path.join(src.path, rel), image=image)  # (os.path: a Path per file showed in profiles)
        except (FileNotFoundError, NotADirectoryError):
            raise checker.fail(field, f"file {rel!r} not found under {src.path}") from None
        except UnsafeFile as exc:
            raise checker.fail(field, f"file {rel!r} {exc}") from None
        hit = (data, sha256_of(data))
        src.remember(key, hit)
    checker.charge(len(hit[0]), src.limits.record_bytes, field)
    return hit


def export_relpath(original_path: str | None) -> str | None:
    """``original_path`` if it can name a file inside an export folder, else None (use the format's
    own name). A file attached from the annotator's disk keeps its absolute path as provenance;
    exporting must not try to write there (or refuse the whole export)."""
    if not original_path:
        return None
    rel = original_path.replace("\\", "/")
    if re.match(r"^[A-Za-z]:", rel) or not _plain_relpath(rel):
        return None
    return rel


def write_file(root: Path, rel: str, data: bytes | str) -> Path:
    """Write under ``root``; refuses paths that would leave it."""
    p = PurePosixPath(rel.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts:
        raise FormatError(rel, message="refusing to write outside the export folder")
    target = root / p
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        target.write_text(data, encoding="utf-8")
    else:
        target.write_bytes(data)
    return target


def write_json(root: Path, rel: str, value: Any, *, indent: int | None = 2) -> Path:
    return write_file(root, rel, json.dumps(value, ensure_ascii=False, indent=indent) + "\n")


def write_jsonl(root: Path, rel: str, values: list[Any]) -> Path:
    return write_file(root, rel, "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values))


def extension_for(mime: str | None, default: str = ".png") -> str:
    if mime == "image/jpeg":
        return ".jpg"
    ext = mimetypes.guess_extension(mime or "") if mime else None
    return ext or default


def file_size(path: Path) -> int:
    """Bytes of the file at ``path`` (links followed), 0 if that cannot be known: a hint, never a check."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def is_entry(path: Path) -> bool:
    """Something other than a folder is at ``path`` (without following a final link)."""
    return os.path.lexists(path) and not path.is_dir()


def find_dataset_file(path: Path, names: tuple[str, ...], what: str) -> Path:
    """``path`` itself if it is a file, else the first of ``names`` inside it.

    Anything that is not a folder counts (a link, a FIFO): reading it then says why it is refused."""
    if is_entry(path):
        return path
    if not path.exists():
        raise FormatError(path, message="does not exist")
    for name in names:
        candidate = path / name
        if is_entry(candidate):
            return candidate
    raise FormatError(path, message=f"no {what} found (looked for {', '.join(names)})")


AssetLoader = Callable[[str], bytes]
