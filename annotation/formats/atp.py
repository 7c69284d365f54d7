"""ATP-Bench: ``data.jsonl`` records ``trace_id, query, image_query, doc, images, gt`` (README field list;
the repository itself was not available, so shapes follow the paper, ``seeds/atp-bench.txt`` §3–4), and
model outputs: interleaved text with ``<tool>{"tool_name", "description", "params"}</tool>`` tags.

Reading: ``doc`` is one text or a list of texts (context documents); ``images`` is a flat list of
document-image paths (the ``img_index`` space of the Reference/Edit tools) or a list of lists, one per
document; ``image_query`` is a path, a list of paths or null (a VQA item has one). ``gt`` is the
interleaved reference answer: its tags become reference steps, the whole text the final step, and the
answer spec is ``interleaved`` (text pieces, and each planned image as the tag it was written as).
Optional ``category``/``intent`` are read when present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

from annotation.formats.base import (
    AssetSpec,
    Checker,
    DatasetSpec,
    DatasetStream,
    DocumentSpec,
    StepSpec,
    TaskBundle,
    TaskSpec,
    export_relpath,
    extension_for,
    file_size,
    find_dataset_file,
    iter_jsonl,
    read_asset,
    read_jsonl,
    write_file,
    write_jsonl,
)
from annotation.formats.run_specs import EventSpec, RunBundle, RunSpec, TrajectorySpec
from annotation.formats.safe_files import DatasetRoot
from annotation.formats.tooltags import parse_tool_tags, split_interleaved
from store import events as ev

name = "atp"
source_format = "atp"
tool_set = "atp"
default_benchmark = "atp"
DATASET_FILE = "data.jsonl"
OUTPUTS_FILE = "outputs.jsonl"
OUTPUT_KEYS = ("output", "response", "prediction", "answer")


def _image(root: Path | DatasetRoot, rel: Any, c: Checker, field: str) -> tuple[str, bytes]:
    c.expect(rel, str, field)
    if rel.startswith(("http://", "https://")):
        raise c.fail(field, f"is a URL ({rel[:60]}); download the images and give paths relative to the data file")
    return rel, read_asset(root, rel, c, field, image=True)


def read(path: Path) -> DatasetSpec:
    """The whole dataset in memory (exports, tests, tools); ``import`` streams it instead."""
    streamed = stream(path)
    return DatasetSpec(list(streamed.tasks), streamed.settings, streamed.notes)


def stream(path: Path) -> DatasetStream:
    """``data.jsonl`` read line by line as the import asks for tasks."""
    file = find_dataset_file(path, (DATASET_FILE,), "ATP-Bench data.jsonl")
    root = DatasetRoot(path if path.is_dir() else file.parent)
    return DatasetStream(_tasks(file, root), size=file_size(file))


def _tasks(file: Path, root: DatasetRoot) -> Iterator[TaskSpec]:
    for lineno, line in iter_jsonl(file, root):
        c = Checker(file, f"line {lineno}")
        c.expect(line, dict, "(record)")
        ident = c.get(line, "trace_id", (str, int), "trace_id")
        c.record = f"line {lineno} (trace_id {ident})"
        yield parse_record(str(ident), line, c, root)


def parse_record(ident: str, line: dict[str, Any], c: Checker, root: Path | DatasetRoot) -> TaskSpec:
    query = c.get(line, "query", str, "query")
    assets: list[AssetSpec] = []
    iq = c.get(line, "image_query", (str, list, type(None)), "image_query", required=False)
    for i, rel in enumerate([iq] if isinstance(iq, str) else iq or []):
        field = "image_query" if isinstance(iq, str) else f"image_query[{i}]"
        p, data = _image(root, rel, c, field)
        assets.append(AssetSpec(data, p, "query_image"))
    doc = c.get(line, "doc", (str, list, type(None)), "doc", required=False)
    texts = [doc] if isinstance(doc, str) else list(doc or [])
    for i, t in enumerate(texts):
        c.expect(t, str, f"doc[{i}]")
    documents = [DocumentSpec(t) for t in texts]
    images = c.get(line, "images", (list, type(None)), "images", required=False) or []
    nested = bool(images) and all(isinstance(x, list) for x in images)
    if nested and len(images) != len(texts):
        raise c.fail("images", f"has {len(images)} per-document lists but there are {len(texts)} documents")
    for i, item in enumerate(images):
        for k, rel in enumerate(item if nested else [item]):
            field = f"images[{i}][{k}]" if nested else f"images[{i}]"
            p, data = _image(root, rel, c, field)
            assets.append(AssetSpec(data, p, "document_image", document_index=i if nested else None))
    gt = c.get(line, "gt", (str, type(None)), "gt", required=False)
    steps: list[StepSpec] = []
    spec: dict[str, Any] = {"kind": "none"}
    if gt:
        for tag in parse_tool_tags(gt):
            if not tag.valid:
                raise c.fail("gt", f"tool tag at character {tag.position}: {tag.error}")
            steps.append(
                StepSpec(
                    thought=tag.description,
                    tool_name=tag.tool_name,
                    tool_args=tag.params,
                    meta={"raw": tag.raw, "position": tag.position},
                )
            )
        steps.append(StepSpec(final_answer=gt))
        golden = [
            {"type": "text", "content": piece} if kind == "text" else {"type": "image", "content": piece.raw}
            for kind, piece in split_interleaved(gt)
        ]
        spec = {"kind": "interleaved", "golden": golden}
    fields = {
        "query": query,
        "answer_spec": spec,
        "category": c.get(line, "category", (str, type(None)), "category", required=False),
        "intent": c.get(line, "intent", (str, type(None)), "intent", required=False),
        "meta": {"vqa": bool(assets and assets[0].role == "query_image")},
    }
    return TaskSpec(ident, line, fields, steps=steps, documents=documents, assets=assets)


# ------------------------------------------------------------------ dataset out


def _rel(bundle: TaskBundle, link: Any, asset: Any) -> str:
    return (
        export_relpath(link.original_path)
        or f"images/{bundle.task.source_id}_{link.role}_{link.ordinal}{extension_for(asset.mime)}"
    )


def build_record(bundle: TaskBundle) -> dict[str, Any]:
    task = bundle.task
    base = task.source_record if isinstance(task.source_record, dict) else {}
    record = dict(base)
    record["trace_id"] = base.get("trace_id", task.source_id)
    record["query"] = task.query
    q = [_rel(bundle, link, a) for link, a in bundle.assets_in("query_image")]
    record["image_query"] = (
        (q[0] if len(q) == 1 and not isinstance(base.get("image_query"), list) else q) if q else None
    )
    texts = [d.text for d in bundle.documents]
    record["doc"] = texts[0] if isinstance(base.get("doc"), str) and len(texts) == 1 else texts
    doc_ids = [d.id for d in bundle.documents]
    doc_images = bundle.assets_in("document_image")
    if any(link.document_id is not None for link, _ in doc_images):
        record["images"] = [
            [_rel(bundle, link, a) for link, a in doc_images if link.document_id == did] for did in doc_ids
        ]
    else:
        record["images"] = [_rel(bundle, link, a) for link, a in doc_images]
    final = next((s.final_answer for s in bundle.steps if s.is_final), None)
    if final is None and (task.answer_spec or {}).get("kind") == "interleaved":
        final = "".join(b["content"] for b in task.answer_spec["golden"])
    record["gt"] = final
    for key in ("category", "intent"):
        if getattr(task, key) is not None or key in base:
            record[key] = getattr(task, key)
    return record


def write(
    bundles: list[TaskBundle], settings: dict[str, Any], root: Path, read_blob: Callable[[str], bytes]
) -> list[Path]:
    written = []
    lines = []
    for b in bundles:
        lines.append(b.task.source_record if b.verbatim else build_record(b))
        for link, asset in b.assets:
            if link.role in ("query_image", "document_image"):
                written.append(write_file(root, _rel(b, link, asset), read_blob(asset.sha256)))
    written.append(write_jsonl(root, DATASET_FILE, lines))
    return written


# ------------------------------------------------------------------ model outputs


def plan_events(text: str) -> list[EventSpec]:
    out = [
        EventSpec(
            ev.MODEL_MESSAGE, {"content": text, "reasoning": None, "tool_calls": [], "usage": {}, "finish_reason": None}
        )
    ]
    for tag in parse_tool_tags(text):
        out.append(EventSpec(ev.PLAN_CALL, tag.to_payload(), failed=not tag.valid))
    out.append(EventSpec(ev.ANSWER, ev.answer(text, text, "raw")))
    return out


def read_run(path: Path) -> RunSpec:
    file = find_dataset_file(path, (OUTPUTS_FILE,), "ATP outputs JSONL")
    trajectories = []
    for lineno, line in read_jsonl(file, path if path.is_dir() else file.parent):
        c = Checker(file, f"line {lineno}")
        c.expect(line, dict, "(record)")
        ident = str(c.get(line, "trace_id", (str, int), "trace_id"))
        key = next((k for k in OUTPUT_KEYS if k in line), None)
        if key is None:
            raise c.fail("output", f"is missing (looked for {', '.join(OUTPUT_KEYS)})")
        text = c.get(line, key, (str, type(None)), key)
        if text is None:
            trajectories.append(
                TrajectorySpec(ident, f"line {lineno}", [], status="failed", error="no output", native=line)
            )
            continue
        trajectories.append(TrajectorySpec(ident, f"line {lineno}", plan_events(text), final_answer=text, native=line))
    return RunSpec("plan", trajectories, {"layout": "atp-outputs"})


def write_run(run: RunBundle, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    if path.suffix == ".jsonl":
        root, rel = path.parent, path.name
    else:
        root, rel = path, OUTPUTS_FILE
    lines = []
    model = run.endpoint.model if run.endpoint else run.run.name
    for tb in run.trajectories:
        native = tb.trajectory.native
        if run.run.kind == "imported" and isinstance(native, dict):
            lines.append(native)
            continue
        answer = next((e for e in reversed(tb.events) if e.kind == ev.ANSWER), None)
        text = (answer.payload.get("raw") or answer.payload.get("text")) if answer else tb.trajectory.final_answer
        lines.append({"trace_id": tb.task.source_id, "model": model, "output": text})
    return [write_jsonl(root, rel, lines)]
