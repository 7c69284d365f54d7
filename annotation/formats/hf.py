"""Hugging Face ``datasets`` folders: a benchmark's tasks as Parquet shards under ``data/`` with the
images embedded (``{"bytes", "path"}`` structs that ``datasets`` reads as ``Image`` features) and a
``README.md`` dataset card whose YAML header carries the license, the name and the split layout.

Writing needs only pyarrow (extra ``interop``); the features are declared in each shard's
``huggingface`` schema metadata, which is where ``datasets`` looks for them. Reading goes through the
safe reader (``safe_files``): shards and card must be regular files inside the folder, under the size
caps, and every embedded image is decoded under the pixel limit before anything is stored.

A task keeps its query, metadata, answer spec, output format and offered tools; reference chains
and checkpoints are not part of a Hub dataset (export them in the benchmark's own format).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from annotation.formats.base import AssetSpec, DatasetSpec, TaskBundle, TaskSpec, export_relpath, extension_for
from annotation.formats.errors import FormatError
from annotation.formats.run_table import require
from annotation.formats.safe_files import DatasetRoot, UnsafeFile, check_image

name = "hf"
source_format = "hf"
tool_set = None
default_benchmark = "hf"
holds_runs = False  # runs of an hf benchmark export in any run format (parquet, inspect)
SPLIT = "test"
ROWS_PER_SHARD = 500
TEXT_FIELDS = ("query", "category", "subcategory", "intent", "level", "domain", "output_format")
# Columns and the `datasets` feature each is read as.
FEATURES: dict[str, Any] = {
    "source_id": {"dtype": "string", "_type": "Value"},
    **{f: {"dtype": "string", "_type": "Value"} for f in TEXT_FIELDS},
    "answer_spec": {"dtype": "string", "_type": "Value"},  # JSON: the tagged union of annotation.answers
    "tools_offered": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
    "meta": {"dtype": "string", "_type": "Value"},  # JSON
    "images": {"feature": {"_type": "Image"}, "_type": "List"},
    "image_roles": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
}


def _schema(pa: Any) -> Any:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    fields = [
        ("source_id", pa.string()),
        *[(f, pa.string()) for f in TEXT_FIELDS],
        ("answer_spec", pa.string()),
        ("tools_offered", pa.list_(pa.string())),
        ("meta", pa.string()),
        ("images", pa.list_(image)),
        ("image_roles", pa.list_(pa.string())),
    ]
    meta = {b"huggingface": json.dumps({"info": {"features": FEATURES}}).encode()}
    return pa.schema(fields, metadata=meta)


def _image_path(b: TaskBundle, link: Any, asset: Any) -> str:
    return (
        export_relpath(link.original_path)
        or f"images/{b.task.source_id}_{link.role}_{link.ordinal}{extension_for(asset.mime)}"
    )


def _row(b: TaskBundle, read_blob: Callable[[str], bytes]) -> dict[str, Any]:
    t = b.task
    links = sorted(
        (p for p in b.assets if p[0].role in ("query_image", "document_image")),
        key=lambda p: (p[0].role != "query_image", p[0].ordinal),
    )
    return {
        "source_id": t.source_id,
        **{f: getattr(t, f) for f in TEXT_FIELDS},
        "answer_spec": json.dumps(t.answer_spec or {}, ensure_ascii=False, sort_keys=True),
        "tools_offered": list(t.tools_offered or []),
        "meta": json.dumps(t.meta or {}, ensure_ascii=False, sort_keys=True, default=str),
        "images": [{"bytes": read_blob(a.sha256), "path": _image_path(b, link, a)} for link, a in links],
        "image_roles": [link.role for link, _ in links],
    }


def _yaml_text(value: Any) -> str:
    return json.dumps("" if value is None else str(value), ensure_ascii=False)  # a JSON string is valid YAML


def card(benchmark: dict[str, Any], tasks: int, shards: int) -> str:
    """The dataset card: YAML header (license, name, configs/splits, features) and a short body."""
    lines = [
        "---",
        f"license: {_yaml_text(benchmark.get('license') or 'unknown')}",
        f"pretty_name: {_yaml_text(benchmark.get('name'))}",
        "tags:",
        "  - chainmark",
        f"  - {_yaml_text(benchmark.get('source_format'))}",
        "configs:",
        "  - config_name: default",
        "    data_files:",
        f"      - split: {SPLIT}",
        f"        path: data/{SPLIT}-*.parquet",
        "chainmark:",
        f"  benchmark: {_yaml_text(benchmark.get('name'))}",
        f"  source_format: {_yaml_text(benchmark.get('source_format'))}",
        f"  tool_set: {_yaml_text(benchmark.get('tool_set'))}",
        "---",
        "",
        f"# {benchmark.get('name')}",
        "",
    ]
    if benchmark.get("description"):
        lines += [str(benchmark["description"]), ""]
    lines += [
        f"{tasks} tasks in {shards} Parquet shard(s), exported by chainmark from a "
        f"{benchmark.get('source_format')} benchmark.",
        "",
        "Columns: `source_id`, "
        + ", ".join(f"`{f}`" for f in TEXT_FIELDS)
        + ", `answer_spec` (JSON), `tools_offered`, `meta` (JSON), `images` (list of Image), "
        "`image_roles` (one per image: query_image or document_image).",
        "",
    ]
    return "\n".join(lines)


def write(
    bundles: list[TaskBundle],
    settings: dict[str, Any],
    root: Path,
    read_blob: Callable[[str], bytes],
    benchmark: dict[str, Any] | None = None,
) -> list[Path]:
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    schema = _schema(pa)
    (root / "data").mkdir(parents=True, exist_ok=True)
    chunks = [bundles[i : i + ROWS_PER_SHARD] for i in range(0, len(bundles), ROWS_PER_SHARD)] or [[]]
    written = []
    for n, chunk in enumerate(chunks):
        target = root / "data" / f"{SPLIT}-{n:05d}-of-{len(chunks):05d}.parquet"
        pq.write_table(pa.Table.from_pylist([_row(b, read_blob) for b in chunk], schema=schema), target)
        written.append(target)
    info = {"license": settings.get("license"), **(benchmark or {})}
    (root / "README.md").write_text(card(info, len(bundles), len(chunks)), encoding="utf-8")
    written.append(root / "README.md")
    return written


# ------------------------------------------------------------------ reading


def _card_fields(text: str) -> dict[str, str]:
    """license / pretty_name / description from the card (the YAML header's plain `key: value` lines)."""
    out: dict[str, str] = {}
    m = re.match(r"---\n(.*?)\n---\n?(.*)", text, re.S)
    if not m:
        return out
    for line in m.group(1).splitlines():
        kv = re.match(r"(license|pretty_name):\s*(.+)$", line)
        if kv:
            raw = kv.group(2).strip()
            try:
                value = json.loads(raw) if raw.startswith('"') else raw
            except json.JSONDecodeError:
                value = raw.strip('"')
            out[kv.group(1)] = str(value)
    return out


def _json_field(raw: Any, file: Path, record: str, field: str) -> Any:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        return json.loads(raw)
    except (TypeError, json.JSONDecodeError):
        raise FormatError(file, record, field, "is not valid JSON") from None


def _shards(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted((path / "data").glob("*.parquet")) or sorted(path.glob("*.parquet"))
    if not found:
        raise FormatError(path, message="no Parquet shards (looked for data/*.parquet and *.parquet)")
    return found


def read(path: Path) -> DatasetSpec:
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    root = DatasetRoot(path if path.is_dir() else path.parent)
    tasks: list[TaskSpec] = []
    seen: set[str] = set()
    for shard in _shards(path):
        try:
            data = root.read(shard)
        except (UnsafeFile, FileNotFoundError) as exc:
            raise FormatError(shard, message=str(exc) or "file not found") from None
        try:
            table = pq.read_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError) as exc:
            raise FormatError(shard, message=f"not a readable Parquet file ({exc})") from None
        if "source_id" not in table.column_names or "query" not in table.column_names:
            raise FormatError(shard, message="needs the columns source_id and query")
        for i, row in enumerate(table.to_pylist()):
            tasks.append(_task(row, shard, f"row {i}", root, seen))
    settings: dict[str, Any] = {}
    card_file = (path if path.is_dir() else path.parent) / "README.md"
    if card_file.exists():
        try:
            settings.update(_card_fields(root.read(card_file).decode("utf-8", "replace")))
        except UnsafeFile as exc:
            raise FormatError(card_file, message=str(exc)) from None
    return DatasetSpec(tasks, settings)


def _task(row: dict[str, Any], shard: Path, record: str, root: DatasetRoot, seen: set[str]) -> TaskSpec:
    ident = row.get("source_id")
    if not isinstance(ident, (str, int)) or str(ident) == "":
        raise FormatError(shard, record, "source_id", "is missing")
    ident = str(ident)
    if ident in seen:
        raise FormatError(shard, record, "source_id", f"{ident!r} appears twice")
    seen.add(ident)
    if not isinstance(row.get("query"), str):
        raise FormatError(shard, record, "query", "must be text")
    fields: dict[str, Any] = {f: row.get(f) for f in TEXT_FIELDS if isinstance(row.get(f), str)}
    fields["answer_spec"] = _json_field(row.get("answer_spec"), shard, record, "answer_spec")
    fields["meta"] = _json_field(row.get("meta"), shard, record, "meta")
    fields["tools_offered"] = [str(t) for t in row.get("tools_offered") or []]
    roles = list(row.get("image_roles") or [])
    assets = []
    for k, image in enumerate(row.get("images") or []):
        if not isinstance(image, dict) or not isinstance(image.get("bytes"), bytes):
            raise FormatError(shard, record, f"images[{k}]", "needs embedded bytes")
        if len(image["bytes"]) > root.limits.image_bytes:
            raise FormatError(
                shard, record, f"images[{k}]", f"is over the {root.limits.image_bytes:,} byte image limit"
            )
        try:
            check_image(image["bytes"], root.limits.image_pixels)
        except UnsafeFile as exc:
            raise FormatError(shard, record, f"images[{k}]", str(exc)) from None
        role = roles[k] if k < len(roles) and roles[k] in ("query_image", "document_image") else "query_image"
        assets.append(AssetSpec(image["bytes"], str(image.get("path") or f"images/{ident}_{k}.png"), role))
    record_copy = {k: v for k, v in row.items() if k != "images"}
    return TaskSpec(ident, record_copy, fields, assets=assets)


def read_run(path: Path, **_: Any) -> Any:
    raise FormatError(
        path,
        message="a Hugging Face dataset holds tasks, not runs; "
        "export runs with: chainmark export-run parquet RUN_ID OUT",
    )


def write_run(run: Any, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    raise FormatError(
        path,
        message="a Hugging Face dataset holds tasks, not runs; "
        "export runs with: chainmark export-run parquet RUN_ID OUT",
    )
