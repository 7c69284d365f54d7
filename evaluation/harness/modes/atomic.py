"""Atomic mode: native function calling with the benchmark's tools (Agentic-MME "Atm", also used for
GTA/VTC tool sets). Produced images go back to the model as images with their index; when rounds or
tool calls run out the model is asked for a final answer without tools; ``<answer>`` is extracted."""

from __future__ import annotations

import json
from typing import Any

from evaluation.harness import prompts
from evaluation.harness.budgets import rounds_left, tool_calls_left
from evaluation.harness.episode import Episode
from evaluation.harness.extract import extract_answer


def uses_image_index(tools: list[Any]) -> bool:
    return any("image_index" in (t.parameters.get("properties") or {}) for t in tools)


def opening_messages(ep: Episode, tools: list[Any]) -> None:
    indexed = uses_image_index(tools)
    template = prompts.prompt_for("atomic" if indexed else "atomic_files", ep.rc.settings)
    ep.add("system", template.format(max_tool_calls=ep.budgets.max_tool_calls or "unlimited"))
    parts: list[dict[str, Any]] = []
    for i, img in enumerate(ep.task.images):
        label = f"Image index {i}:" if indexed else f"File {img.name}:"
        parts.append({"type": "text", "text": label})
        parts.append(ep.image_part(img.data, img.asset_id, i, img.mime))
    text = ep.task.prompt_text()
    if not indexed and ep.task.images:
        text += "\nThe related files are at " + ", ".join(f"`{i.name}`" for i in ep.task.images)
    parts.append({"type": "text", "text": text})
    ep.add("user", parts)


def tool_feedback(ep: Episode, name: str, outcome: Any, indexed: bool) -> tuple[str, list[dict[str, Any]]]:
    """The tool message text, and the image parts to show next (one user message after the calls)."""
    if not outcome.ok:
        return json.dumps({"ok": False, "error": outcome.error}), []
    result: dict[str, Any] = {"ok": True, "tool": name}
    if outcome.text:
        result["text"] = outcome.text
    if outcome.data:
        result["data"] = outcome.data
    parts: list[dict[str, Any]] = []
    for idx, name_, data, aid in zip(
        outcome.image_indices, outcome.image_names or [None] * len(outcome.images), outcome.images, outcome.asset_ids
    ):
        if indexed:
            result.setdefault("new_image_index", []).append(idx)
            parts.append({"type": "text", "text": f"Image index {idx} (from {name}):"})
        else:
            result.setdefault("new_files", []).append(name_)
            parts.append({"type": "text", "text": f"File {name_} (from {name}):"})
        parts.append(ep.image_part(data, aid, idx))
    if "new_image_index" in result and len(result["new_image_index"]) == 1:
        result["new_image_index"] = result["new_image_index"][0]
    return json.dumps(result, ensure_ascii=False, default=str)[:20_000], parts


async def run(ep: Episode) -> None:
    tools = ep.offered_tools()
    indexed = uses_image_index(tools)
    schemas = ep.tool_schemas(tools)
    allowed = {t.name for t in tools}
    opening_messages(ep, tools)
    while rounds_left(ep.budgets, ep.usage):
        reply = await ep.chat(tools=schemas or None)
        ep.add_assistant(reply)
        if not reply.tool_calls:
            answer, how = extract_answer(reply.content)
            ep.finish(answer, reply.content, how, failed=how in ("raw", "empty"))
            return
        images: list[dict[str, Any]] = []
        for call in reply.tool_calls:
            if not tool_calls_left(ep.budgets, ep.usage):
                ep.add(
                    "tool", json.dumps({"ok": False, "error": "tool-call budget exhausted"}), tool_call_id=call["id"]
                )
                continue
            outcome = await ep.run_tool(call["name"], call["arguments"], call["id"], allowed=allowed)
            text, parts = tool_feedback(ep, call["name"], outcome, indexed)
            ep.add("tool", text, tool_call_id=call["id"])
            images.extend(parts)
        if images:
            ep.add("user", images)
        if not tool_calls_left(ep.budgets, ep.usage):
            break
    ep.exhausted = "tool_calls" if not tool_calls_left(ep.budgets, ep.usage) else "rounds"
    await final_answer_without_tools(ep)


async def final_answer_without_tools(ep: Episode) -> None:
    ep.add("user", prompts.FINAL_ANSWER_REQUEST)
    reply = await ep.chat()
    ep.add_assistant(reply)
    answer, how = extract_answer(reply.content)
    ep.finish(answer, reply.content, how, failed=how in ("raw", "empty"))
