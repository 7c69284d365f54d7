"""Everything a trajectory needs from a task, loaded once into plain objects (no live ORM rows cross
threads): query, images with bytes, documents, the gold chain (step mode), offered tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from store import core_tables as tb
from store.blobs import BlobNotFound, BlobStore


@dataclass
class TaskImage:
    asset_id: int
    data: bytes
    mime: str
    name: str  # the path-style name tools and prompts use (original path or image/image_<n>.<ext>)
    role: str = "query_image"
    document_id: int | None = None


@dataclass
class TaskDocument:
    id: int
    title: str | None
    text: str
    images: list[TaskImage] = field(default_factory=list)


@dataclass
class GoldStep:
    ordinal: int
    thought: str | None
    tool_name: str | None
    tool_args: Any
    result_text: str | None
    is_final: bool
    final_answer: str | None


@dataclass
class TaskInput:
    id: int
    revision: int
    source_id: str
    query: str
    answer_spec: dict[str, Any]
    output_format: str | None
    tools_offered: list[str]
    meta: dict[str, Any]
    images: list[TaskImage] = field(default_factory=list)
    documents: list[TaskDocument] = field(default_factory=list)
    steps: list[GoldStep] = field(default_factory=list)
    # input files that could not be read ("NAME: why"): the trajectory fails with that reason instead of
    # the whole run (one task's deleted image file stopped every other task of the run)
    missing: list[str] = field(default_factory=list)

    def prompt_text(self) -> str:
        """The query as the model reads it: MCQ options and the output-format instruction appended."""
        text = self.query
        spec = self.answer_spec or {}
        if spec.get("kind") == "mcq" and spec.get("options") and "Options:" not in text:
            opts = "".join(f"{k}. {v}\n" for k, v in spec["options"].items() if v not in (None, ""))
            text = f"{text}\n\nOptions:\n{opts}"
        if self.output_format:
            text = f"{text}\n\n{self.output_format}"
        return text


_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/bmp": "bmp"}


def load_task(session: Any, blobs: BlobStore, task_id: int) -> TaskInput:
    tasks = load_tasks(session, blobs, [task_id])
    if not tasks:
        raise LookupError(f"no task with id {task_id}")
    return tasks[0]


def load_tasks(session: Any, blobs: BlobStore, task_ids: list[int]) -> list[TaskInput]:
    """Several tasks with four queries in all (runs prefetch tasks in batches). Plain column rows in
    SQLAlchemy Core, not ORM objects: this runs on a reader thread that shares the GIL with the run's
    event loop, on a connection (or an ORM session)."""
    if not task_ids:
        return []
    task, link, asset, doc, step = tb.task.c, tb.taskasset.c, tb.asset.c, tb.document.c, tb.referencestep.c
    tasks = session.execute(
        sa.select(
            task.id,
            task.revision,
            task.source_id,
            task.query,
            task.answer_spec,
            task.output_format,
            task.tools_offered,
            task.meta,
        ).where(task.id.in_(task_ids))
    ).all()
    links = session.execute(
        sa.select(link.task_id, link.role, link.original_path, link.document_id, asset.id, asset.sha256, asset.mime)
        .select_from(tb.taskasset.join(tb.asset, asset.id == link.asset_id))
        .where(link.task_id.in_(task_ids), link.role.in_(("query_image", "document_image")))
        .order_by(link.task_id, link.role.desc(), link.ordinal, link.id)
    ).all()
    docs = session.execute(
        sa.select(doc.id, doc.task_id, doc.title, doc.text)
        .where(doc.task_id.in_(task_ids))
        .order_by(doc.task_id, doc.ordinal, doc.id)
    ).all()
    steps = session.execute(
        sa.select(
            step.task_id,
            step.ordinal,
            step.thought,
            step.tool_name,
            step.tool_args,
            step.result_text,
            step.is_final,
            step.final_answer,
        )
        .where(step.task_id.in_(task_ids))
        .order_by(step.task_id, step.ordinal)
    ).all()
    images: dict[int, list[TaskImage]] = {}
    by_doc: dict[int, list[TaskImage]] = {}
    counter: dict[int, int] = {}
    data: dict[str, bytes | BlobNotFound] = {}  # a blob shared by several tasks of the batch is read once
    missing: dict[int, list[str]] = {}
    for task_id, role, original_path, document_id, asset_id, sha256, mime in links:
        n = counter[task_id] = counter.get(task_id, -1) + 1
        name = original_path or f"image/image_{task_id}_{n}.{_EXT.get(mime, 'png')}"
        if sha256 not in data:
            try:
                data[sha256] = blobs.get(sha256, session)
            except BlobNotFound as exc:
                data[sha256] = exc
        blob = data[sha256]
        if isinstance(blob, BlobNotFound):
            missing.setdefault(task_id, []).append(f"{name}: {blob}")
            continue
        img = TaskImage(asset_id or 0, blob, mime, name, role, document_id)
        if role == "document_image" and document_id is not None:
            by_doc.setdefault(document_id, []).append(img)
        else:
            images.setdefault(task_id, []).append(img)
    documents: dict[int, list[TaskDocument]] = {}
    for doc_id, task_id, title, text in docs:
        documents.setdefault(task_id, []).append(TaskDocument(doc_id or 0, title, text, by_doc.get(doc_id or 0, [])))
    gold: dict[int, list[GoldStep]] = {}
    for task_id, *step in steps:
        gold.setdefault(task_id, []).append(GoldStep(*step))
    by_id = {t.id: t for t in tasks}
    return [
        TaskInput(
            t.id or 0,
            t.revision,
            t.source_id,
            t.query,
            dict(t.answer_spec or {}),
            t.output_format,
            list(t.tools_offered or []),
            dict(t.meta or {}),
            images.get(t.id or 0, []),
            documents.get(t.id or 0, []),
            gold.get(t.id or 0, []),
            missing.get(t.id or 0, []),
        )
        for t in (by_id.get(i) for i in task_ids)
        if t is not None
    ]
