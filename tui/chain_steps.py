"""Running a tool on a task's images and recording the call as a reference step: what the chain builder's
ctrl+r / ctrl+s do and what ``chainmark chain add`` does, in one place. It needs both the tools
(evaluation) and the authoring functions (annotation), so it lives above them, without Textual."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotation import tasks as authoring

if TYPE_CHECKING:
    from sqlmodel import Session

    from evaluation.tools import ToolResult
    from evaluation.tools.images import ImageData
    from tui.data import AssetRef, TaskDetail


def tool_set_for(d: TaskDetail) -> str:
    """The tool set the task's chains use (``tool_lists.benchmark_tool_set``)."""
    from tui.tool_lists import benchmark_tool_set

    return benchmark_tool_set(d.tool_set, d.source_format)


def file_name(ref: AssetRef, index: int) -> str:
    """The name a path-style tool argument (GTA, VTC) uses for a strip image."""
    ext = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}.get(ref.mime, "png")
    return f"image/image_{index}.{ext}"


def is_planned(tool_set: str, tool_name: str) -> bool:
    """A plan-only tool (ATP): checked, never executed."""
    from evaluation.tools import get_tool_set

    return get_tool_set(tool_set).get(tool_name).kind == "plan"


def planned_call(tool_set: str, tool_name: str, args: dict[str, Any], description: str) -> ToolResult:
    """A plan-only tool (ATP) is never executed: "running" it checks the call as ATP's format metric
    does and gives a result that can be accepted as a step, as imported plans are (the description
    is the step's thought). Without this an ATP chain could not be authored at all."""
    from evaluation.tools import ToolResult, validate_plan_call

    ok, why = validate_plan_call({"tool_name": tool_name, "description": description, "params": args})
    if not ok and not description:
        why = "a planned call needs a description: type it in the thought field"
    return ToolResult(
        ok=ok,
        text="planned call (not executed)" if ok else "",
        error=why,
        tool=tool_name,
        tool_set=tool_set,
    )


def run_tool(
    session: Session,
    blobs: Any,
    refs: list[AssetRef],
    tool_set: str,
    tool_name: str,
    args: dict[str, Any],
    *,
    description: str = "",
    extra_images: Sequence[ImageData] = (),
) -> ToolResult:
    """Run ``tool_name`` on the strip images ``refs`` (index 0 is the first; each also under its
    ``image/image_N.ext`` name), plus ``extra_images`` after them (a blind attempt's own results)."""
    from evaluation.tools import ToolContext, ToolSettings, execute

    if is_planned(tool_set, tool_name):
        return planned_call(tool_set, tool_name, args, description)
    attempt = list(extra_images)
    images: list[ImageData] = [*(blobs.get(r.sha256, session) for r in refs), *attempt]
    files: dict[str, ImageData] = {file_name(r, i): images[i] for i, r in enumerate(refs)}
    files.update({f"image/image_{len(refs) + i}.png": b for i, b in enumerate(attempt)})
    ctx = ToolContext(
        images=images, files=files, session=session, blobs=blobs, settings=ToolSettings.from_env(), allow_paths=False
    )
    return execute(tool_set, tool_name, args, ctx)


@dataclass
class RecordedStep:
    step_id: int
    link_ids: list[int]


def record_step(
    session: Session,
    blobs: Any,
    task_id: int,
    tool_name: str,
    args: dict[str, Any],
    result: ToolResult,
    thought: str | None = None,
) -> RecordedStep:
    """The call as the task's next reference step, with its result and the images it produced (stored as
    the step's artifacts, so later steps can name them)."""
    step = authoring.add_step(
        session,
        task_id,
        thought=thought,
        tool_name=tool_name,
        tool_args=args,
        result_text=result.text,
        result={"data": result.data, "image_names": result.image_names},
    )
    links = [
        authoring.attach_asset(session, blobs, task_id, data, role="artifact", step_id=step.id)
        for data in result.images
    ]
    if links:
        step.result = {**(step.result or {}), "asset_ids": [link.asset_id for link in links]}
        session.flush()
    return RecordedStep(int(step.id or 0), [int(link.id or 0) for link in links])
