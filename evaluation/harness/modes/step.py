"""Step mode (GTA step-by-step, ``every_with_gt``): for each gold assistant turn the gold prefix is
replayed in ReAct form and the model predicts ONE step; before the final gold turn the summarise
request is added. Predictions are recorded in GTA's predicted-step shape for the GTA metrics."""

from __future__ import annotations

from typing import Any

from evaluation.harness import prompts
from evaluation.harness import react_protocol as rp
from evaluation.harness.episode import Episode
from store import events as ev


def predicted_step(text: str | None) -> dict[str, Any]:
    step = rp.parse(text)
    if step.kind == "finish":
        return {"role": "assistant", "content": step.final}
    if step.kind == "invalid":
        return {"role": "assistant", "content": (text or "").strip(), "error": {"type": "NoAction", "msg": step.error}}
    args, problem = rp.parse_action_input(step.action_input)
    pred: dict[str, Any] = {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": step.action, "arguments": args if problem is None else step.action_input},
            }
        ],
    }
    if step.thought:
        pred["thought"] = step.thought
    if problem:
        pred["error"] = {"type": "ActionInputError", "msg": problem}
    return pred


async def run(ep: Episode) -> None:
    gold = ep.task.steps
    if not gold:
        ep.failed_reason = "step mode needs a reference chain (gold steps) on the task"
        ep.recorder.error("no_gold", ep.failed_reason)
        return
    tools = ep.offered_tools()
    system = rp.system_prompt(tools, ep.rc.settings, "step")
    last: dict[str, Any] | None = None
    for i, target in enumerate(gold):
        ep.messages = []
        ep._recorded = 0
        ep.add("system", system)
        if ep.task.images:
            ep.add("system", rp.files_message([img.name for img in ep.task.images]))
        ep.add("user", ep.task.prompt_text())
        for prev in gold[:i]:
            if prev.is_final:
                continue
            ep.add(
                "assistant", rp.render_gold_call(prev.thought, prev.tool_name or "", prev.tool_args), replayed_gold=True
            )
            ep.add("system", prev.result_text or "", replayed_gold=True)
        if target.is_final:
            ep.add("user", prompts.GTA_SUMMARISE)
        reply = await ep.chat()
        ep.add_assistant(reply)
        last = predicted_step(reply.content)
        ep.recorder.add(ev.STEP_PREDICTION, {"gold_index": i, "prediction": last}, failed="error" in last)
    if last is not None and "tool_calls" not in last:
        ep.finish(last.get("content", ""), last.get("content", ""), "final-answer-marker", failed="error" in last)
    else:
        ep.finish("", None, "empty", failed=True)
