"""ISG-Bench: one JSON line per item with ``Query``, ``Golden`` (interleaved text/image blocks) and the
``predict`` scene-graph questions (seed_formats.md §4.1), images relative to the JSONL's folder; and the
prediction lines, which are the item plus ``output`` (§4.2).

Query images become query_image assets and Golden images golden assets; the answer spec is
``interleaved`` with the Golden blocks. ``predict`` stays in the source record (the scorer reads it there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterator

from annotation.formats.base import (
    AssetSpec,
    Checker,
    DatasetSpec,
    DatasetStream,
    TaskBundle,
    TaskSpec,
    export_relpath,
    extension_for,
    find_dataset_file,
    file_size,
    is_entry,
    iter_jsonl,
    read_asset,
    read_jsonl,
    safe_relpath,
    write_file,
    write_jsonl,
)
from annotation.formats.errors import FormatError
from annotation.formats.safe_files import DatasetRoot, UnsafeFile
from annotation.formats.run_specs import EventSpec, RunBundle, RunSpec, TrajectorySpec
from store import events as ev

name = "isg"
source_format = "isg"
tool_set = None
default_benchmark = "isg"
DATASET_FILE = "ISG-Bench.jsonl"
PREDICTIONS_FILE = "predictions.jsonl"
PREDICTION_KEYS = ("output", "result")

# calculate_performance.Sum_category: subcategory -> category
SUM_CATEGORY = {
    **dict.fromkeys(
        ["Art Style Transfer", "Scene Attribute Transfer", "Photo Variation", "Portrait Variation"], "Style Transfer"
    ),
    **dict.fromkeys(["Animation Images", "Animation Text-Image", "Attribute Transfer"], "Progressive"),
    **dict.fromkeys(["3D_object", "multi-Perspective Scene Generation"], "3D Scene"),
    **dict.fromkeys(["Realistic Object Detection", "Imaginary Object Detection"], "Image Decomposition"),
    **dict.fromkeys(["HowTo", "Scientific"], "Image-Text Complementation"),
    **dict.fromkeys(["Prediction", "painting"], "Temporal Prediction"),
    **dict.fromkeys(
        ["visual storytelling text-image", "visual storytelling image", "visual storytelling text"],
        "Visual Story Telling",
    ),
    **dict.fromkeys(["Object_VQA", "Historical"], "VQA"),
}


def _jsonl_file(path: Path, default: str) -> Path:
    if path.is_dir():
        candidates = sorted(path.glob("*.jsonl"))
        if is_entry(path / default):
            return path / default
        if len(candidates) == 1:
            return candidates[0]
    return find_dataset_file(path, (default,), f"ISG {default}")


def check_blocks(value: Any, c: Checker, field: str, *, allow_empty: bool = False) -> list[dict[str, Any]]:
    c.expect(value, list, field)
    if not value and not allow_empty:
        raise c.fail(field, "is empty")
    for i, block in enumerate(value):
        btype = c.get(block, "type", str, f"{field}[{i}].type")
        if btype not in ("text", "image"):
            raise c.fail(f"{field}[{i}].type", f"must be 'text' or 'image', got {btype!r}")
        c.get(block, "content", str, f"{field}[{i}].content")
    return value


def read(path: Path) -> DatasetSpec:
    """The whole dataset in memory (exports, tests, tools); ``import`` streams it instead."""
    streamed = stream(path)
    return DatasetSpec(list(streamed.tasks), streamed.settings, streamed.notes)


def stream(path: Path) -> DatasetStream:
    """The JSONL read line by line as the import asks for tasks; the note on model output is added
    once the last line is read."""
    file = _jsonl_file(path, DATASET_FILE)
    root = DatasetRoot(path if path.is_dir() else file.parent)
    notes: list[str] = []
    return DatasetStream(_tasks(file, root, notes), notes=notes, size=file_size(file))


def _tasks(file: Path, root: DatasetRoot, notes: list[str]) -> Iterator[TaskSpec]:
    with_output = 0
    for lineno, line in iter_jsonl(file, root):
        c = Checker(file, f"line {lineno}")
        c.expect(line, dict, "(record)")
        ident = c.get(line, "id", (str, int), "id")
        c.record = f"line {lineno} (id {ident})"
        record = {k: v for k, v in line.items() if k not in PREDICTION_KEYS}
        with_output += len(record) != len(line)
        yield parse_record(str(ident), record, c, root)
    if with_output:
        notes.append(
            f"{with_output} line(s) carry model output; it was not imported as task data "
            f"(use `chainmark import-run isg` for predictions)"
        )


def parse_record(ident: str, record: dict[str, Any], c: Checker, root: Path | DatasetRoot) -> TaskSpec:
    category = c.get(record, "Category", str, "Category")
    query = check_blocks(c.get(record, "Query", list, "Query"), c, "Query")
    golden = check_blocks(c.get(record, "Golden", list, "Golden"), c, "Golden")
    c.get(record, "predict", dict, "predict", required=False)
    assets = []
    for field, blocks, role in (("Query", query, "query_image"), ("Golden", golden, "golden")):
        for i, b in enumerate(blocks):
            if b["type"] == "image":
                rel = safe_relpath(b["content"], c, f"{field}[{i}].content")
                assets.append(AssetSpec(read_asset(root, rel, c, f"{field}[{i}].content", image=True), rel, role))
    text = "\n".join(b["content"] for b in query if b["type"] == "text")
    fields = {
        "query": text or "(image-only query)",
        "subcategory": category,
        "category": SUM_CATEGORY.get(category, category),
        "answer_spec": {
            "kind": "interleaved",
            "golden": [{"type": b["type"], "content": b["content"]} for b in golden],
        },
    }
    return TaskSpec(ident, record, fields, assets=assets)


# ------------------------------------------------------------------ dataset out


def _paths(bundle: TaskBundle, role: str, prefix: str) -> list[str]:
    return [
        export_relpath(link.original_path)
        or f"images/{bundle.task.source_id}_{prefix}{n + 1}{extension_for(asset.mime)}"
        for n, (link, asset) in enumerate(bundle.assets_in(role))
    ]


def build_record(bundle: TaskBundle) -> dict[str, Any]:
    task = bundle.task
    base = task.source_record if isinstance(task.source_record, dict) else {}
    record: dict[str, Any] = {
        "id": base.get("id", task.source_id),
        "Category": task.subcategory or task.category or base.get("Category") or "",
    }
    q_images = _paths(bundle, "query_image", "q")
    base_query = base.get("Query") or []
    if (
        "\n".join(b.get("content", "") for b in base_query if b.get("type") == "text") == task.query
        and [b.get("content") for b in base_query if b.get("type") == "image"] == q_images
    ):
        record["Query"] = base_query
    else:
        record["Query"] = [{"type": "text", "content": task.query}] + [
            {"type": "image", "content": p} for p in q_images
        ]
    g_images = iter(_paths(bundle, "golden", "g"))
    golden = []
    for block in (task.answer_spec or {}).get("golden") or []:
        content = block["content"]
        if block["type"] == "image":
            content = next(g_images, content)
        golden.append({"type": block["type"], "content": content})
    record["Golden"] = golden
    extra = {k: v for k, v in base.items() if k not in record}
    record.update(extra)
    return record


def write(
    bundles: list[TaskBundle], settings: dict[str, Any], root: Path, read_blob: Callable[[str], bytes]
) -> list[Path]:
    lines = []
    written = []
    for b in bundles:
        lines.append(b.task.source_record if b.verbatim else build_record(b))
        for role, prefix in (("query_image", "q"), ("golden", "g")):
            for (_, asset), rel in zip(b.assets_in(role), _paths(b, role, prefix)):
                written.append(write_file(root, rel, read_blob(asset.sha256)))
    written.append(write_jsonl(root, DATASET_FILE, lines))
    return written


# ------------------------------------------------------------------ predictions in/out


def _reference_image(content: str, root: DatasetRoot, checker: Checker, field: str) -> bytes | None:
    """ISG-eval.py's rule: a path that exists as given is used as it is, any other is joined under
    ``--root``. Only files inside ``--root`` are read (a path as given that lies elsewhere falls through
    to the second rule); a refused file (link out, FIFO, device, not an image) is an error naming the
    field. None when the image is missing."""
    if not content:
        return None
    as_given = Path(content).absolute()
    inside = os.path.realpath(as_given).startswith(os.path.realpath(root.path) + os.sep)
    for target in ([as_given] if inside and os.path.lexists(as_given) else []) + [Path(root.path) / content]:
        try:
            data = root.read(target, image=True)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except UnsafeFile as exc:
            raise checker.fail(field, f"file {content!r} {exc}") from None
        checker.charge(len(data), root.limits.record_bytes, field)
        return data
    return None


def read_run(path: Path, *, root: Path | None = None, drop_last: bool = False) -> RunSpec:
    """Prediction lines. Output images resolve next to the JSONL by default; with ``root`` they resolve as
    ``ISG-eval.py --root`` does. ``drop_last`` leaves out the last line, as the reference CLI's default
    ``--end -1`` (``input_data[start:-1]``) does."""
    file = _jsonl_file(path, PREDICTIONS_FILE)
    files = DatasetRoot(path if path.is_dir() else file.parent)
    ref_root = DatasetRoot(root) if root is not None else None
    trajectories = []
    notes = []
    lines = read_jsonl(file, files)
    if drop_last and lines:
        notes.append(
            f"the last line (line {lines[-1][0]}) was left out, as ISG-eval.py's default --end -1 leaves it out"
        )
        lines = lines[:-1]
    missing = []
    for lineno, line in lines:
        c = Checker(file, f"line {lineno}")
        c.expect(line, dict, "(record)")
        ident = str(c.get(line, "id", (str, int), "id"))
        output = line.get("output")
        if output is None:
            trajectories.append(
                TrajectorySpec(
                    ident,
                    f"line {lineno}",
                    [],
                    status="failed",
                    error="no output (passed through unjudged)",
                    native=line,
                )
            )
            continue
        blocks = check_blocks(output, c, "output", allow_empty=True)
        images = []
        for i, b in enumerate(blocks):
            if b["type"] == "image":
                where = f"output[{i}].content"
                if ref_root is not None:
                    data = _reference_image(str(b["content"]), ref_root, c, where)
                    if data is None:  # the reference fails the judge calls that show it; so do we
                        blocks = [*blocks[:i], {**b, "missing": True}, *blocks[i + 1 :]]
                        missing.append(f"{ident} {where} {b['content']!r}")
                    else:
                        images.append(data)
                else:
                    images.append(read_asset(files, safe_relpath(b["content"], c, where), c, where, image=True))
        text = "\n".join(b["content"] for b in blocks if b["type"] == "text")
        payload = {**ev.answer(text, ""), "blocks": blocks}
        trajectories.append(
            TrajectorySpec(
                ident, f"line {lineno}", [EventSpec(ev.ANSWER, payload, assets=images)], final_answer=text, native=line
            )
        )
    if missing:
        notes.append(
            f"{len(missing)} output image(s) found neither as given nor under --root; kept as missing "
            f"images, which fail the judge calls that show them, as in ISG-eval.py: "
            f"{'; '.join(missing[:5])}{' …' if len(missing) > 5 else ''}"
        )
    config: dict[str, Any] = {"layout": "isg-output"}
    if root is not None:
        config["root"] = str(root)
    return RunSpec(
        "plan",
        trajectories,
        config,
        notes=notes,
        unknown_id_differs="ISG-eval.py keeps such a line and calculate_performance.py counts it under "
        "the line's own Category with default scores (or fails without one)",
        duplicate_differs="ISG-eval.py judges every line and calculate_performance.py counts each",
    )


def _write_imported_images(tb: Any, root: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    """An imported line is written verbatim; its output images go beside it at the relative paths it names,
    so ``ISG-eval.py --root <export folder>`` finds them (absolute paths still name the original files)."""
    answer = next((e for e in reversed(tb.events) if e.kind == ev.ANSWER), None)
    if answer is None:
        return []
    images = iter(tb.event_assets.get(answer.id, []))
    written = []
    for block in answer.payload.get("blocks") or []:
        if block.get("type") != "image" or block.get("missing"):
            continue
        pair = next(images, None)
        content = str(block.get("content") or "")
        if pair is None or not _plain_relpath_of(content):
            continue
        written.append(write_file(root, content, read_blob(pair[1].sha256)))
    return written


def _plain_relpath_of(content: str) -> bool:
    parts = content.replace("\\", "/").split("/")
    return bool(content) and not content.startswith("/") and ".." not in parts and ":" not in parts[0]


def write_run(run: RunBundle, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    if path.suffix == ".jsonl":
        root, rel = path.parent, path.name
    else:
        root, rel = path, PREDICTIONS_FILE
    lines = []
    written = []
    for tb in run.trajectories:
        native = tb.trajectory.native
        if run.run.kind == "imported" and isinstance(native, dict):
            lines.append(native)
            written.extend(_write_imported_images(tb, root, read_blob))
            continue
        bundle = run.task_bundles.get(tb.task.id)
        line = dict(
            bundle.task.source_record
            if bundle and bundle.verbatim
            else build_record(bundle)
            if bundle
            else {"id": tb.task.source_id}
        )
        answer = next((e for e in reversed(tb.events) if e.kind == ev.ANSWER), None)
        if answer is None:
            line["output"] = None
        else:
            images = iter(tb.event_assets.get(answer.id, []))
            blocks = []
            for n, block in enumerate(
                answer.payload.get("blocks") or [{"type": "text", "content": answer.payload.get("text", "")}]
            ):
                content = block.get("content", "")
                if block.get("type") == "image":
                    pair = next(images, None)
                    if pair is None:
                        raise FormatError(
                            f"run {run.run.id}",
                            tb.task.source_id,
                            f"output[{n}]",
                            "an image block without its image asset",
                        )
                    content = f"outputs/{tb.task.source_id}_{n}{extension_for(pair[1].mime)}"
                    written.append(write_file(root, content, read_blob(pair[1].sha256)))
                blocks.append({"type": block.get("type", "text"), "content": content})
            line["output"] = blocks
        lines.append(line)
    written.append(write_jsonl(root, rel, lines))
    return written
