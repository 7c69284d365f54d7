"""Everything a trajectory needs from a task, loaded once into plain objects (no live ORM rows cross
threads): query, images with bytes, documents, the gold chain (step mode), offered tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select

from store.blobs import BlobStore
from store.models import Asset, Document, ReferenceStep, Task, TaskAsset


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


def load_task(session: Session, blobs: BlobStore, task_id: int) -> TaskInput:
    task = session.get(Task, task_id)
    if task is None:
        raise LookupError(f"no task with id {task_id}")
    links = session.exec(select(TaskAsset, Asset).join(Asset, Asset.id == TaskAsset.asset_id)
                         .where(TaskAsset.task_id == task_id,
                                TaskAsset.role.in_(("query_image", "document_image")))  # type: ignore[attr-defined]
                         .order_by(TaskAsset.role.desc(), TaskAsset.ordinal, TaskAsset.id)).all()  # type: ignore[attr-defined]
    images: list[TaskImage] = []
    by_doc: dict[int, list[TaskImage]] = {}
    for n, (link, asset) in enumerate(links):
        name = link.original_path or f"image/image_{task_id}_{n}.{_EXT.get(asset.mime, 'png')}"
        img = TaskImage(asset.id or 0, blobs.get(asset.sha256, session), asset.mime, name, link.role,
                        link.document_id)
        if link.role == "document_image" and link.document_id is not None:
            by_doc.setdefault(link.document_id, []).append(img)
        else:
            images.append(img)
    docs = [TaskDocument(d.id or 0, d.title, d.text, by_doc.get(d.id or 0, []))
            for d in session.exec(select(Document).where(Document.task_id == task_id)
                                  .order_by(Document.ordinal, Document.id)).all()]
    steps = [GoldStep(s.ordinal, s.thought, s.tool_name, s.tool_args, s.result_text, s.is_final, s.final_answer)
             for s in session.exec(select(ReferenceStep).where(ReferenceStep.task_id == task_id)
                                   .order_by(ReferenceStep.ordinal)).all()]
    return TaskInput(task.id or 0, task.revision, task.source_id, task.query, dict(task.answer_spec or {}),
                     task.output_format, list(task.tools_offered or []), dict(task.meta or {}),
                     images, docs, steps)
