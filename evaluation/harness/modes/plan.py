"""Plan mode (ATP-Bench): one response interleaving text and ``<tool>{json}</tool>`` calls; the calls
are parsed (tolerantly) and validated, recorded as planned calls, never executed."""

from __future__ import annotations

from typing import Any

from evaluation.harness import prompts
from evaluation.harness.episode import Episode
from evaluation.harness.planparse import parse_and_validate
from store import events as ev


def _tool_list(ep: Episode) -> str:
    tools = ep.offered_tools()
    if not tools:
        return "(none)"
    lines = []
    for t in tools:
        params = ", ".join(sorted((t.parameters.get("properties") or {}).keys()))
        lines.append(f"- {t.name}: {t.description} (params: {params or 'none'})")
    return "\n".join(lines)


async def run(ep: Episode) -> None:
    ep.add("system", prompts.prompt_for("plan", ep.rc.settings).format(tool_list=_tool_list(ep)))
    parts: list[dict[str, Any]] = []
    index = 0
    for img in ep.task.images:
        parts.append({"type": "text", "text": f"User image (img_index {index}):"})
        parts.append(ep.image_part(img.data, img.asset_id, index, img.mime))
        index += 1
    for n, doc in enumerate(ep.task.documents, start=1):
        head = f"Document {n}" + (f": {doc.title}" if doc.title else "")
        parts.append({"type": "text", "text": f"{head}\n{doc.text}"})
        for img in doc.images:
            parts.append({"type": "text", "text": f"[img_index {index}]"})
            parts.append(ep.image_part(img.data, img.asset_id, index, img.mime))
            index += 1
    parts.append({"type": "text", "text": f"Query: {ep.task.prompt_text()}"})
    ep.add("user", parts)
    reply = await ep.chat()
    ep.add_assistant(reply)
    text = reply.content or ""
    calls = parse_and_validate(text, {t.name for t in ep.offered_tools()} or None)
    for call in calls:
        ep.recorder.add(ev.PLAN_CALL, call, failed=not call["valid"])
    ep.finish(text, text, "raw", failed=not text.strip())
