"""ReAct mode (GTA end to end): Thought / Action / Action Input / Final Answer as text, tools really
executed, results fed back as ``Response:`` system messages, at most ``max_rounds`` turns."""

from __future__ import annotations

from evaluation.harness import react_protocol as rp
from evaluation.harness.budgets import rounds_left, tool_calls_left
from evaluation.harness.episode import Episode
from evaluation.harness.modes.atomic import final_answer_without_tools
from store import events as ev


async def run(ep: Episode) -> None:
    tools = ep.offered_tools()
    allowed = {t.name for t in tools}
    ep.add("system", rp.system_prompt(tools, ep.rc.settings))
    if ep.task.images:
        ep.add("user", rp.files_message([i.name for i in ep.task.images]))
    ep.add("user", ep.task.prompt_text())
    while rounds_left(ep.budgets, ep.usage):
        reply = await ep.chat()
        ep.add_assistant(reply)
        step = rp.parse(reply.content)
        if step.kind == "finish":
            ep.finish(step.final, reply.content, "final-answer-marker")
            return
        if step.kind == "invalid":
            ep.recorder.error("protocol", step.error)
            ep.add("system", f"Response:{step.error}\n")
            continue
        if not tool_calls_left(ep.budgets, ep.usage):
            break
        args, problem = rp.parse_action_input(step.action_input)
        outcome = await ep.run_tool(
            step.action, args if problem is None else step.action_input, f"react_{ep.usage.rounds}", allowed=allowed
        )
        body = rp.render_result(outcome.text, outcome.image_names) if outcome.ok else f"Error: {outcome.error}"
        ep.add("system", f"Response:{body}\n")
    ep.exhausted = "tool_calls" if not tool_calls_left(ep.budgets, ep.usage) else "rounds"
    ep.recorder.add(ev.ERROR, {"type": "budget", "message": f"{ep.exhausted} exhausted; asking for the final answer"})
    ep.add("user", "Please summarize the chat history and give a final answer. Do not call any tools.")
    reply = await ep.chat()
    ep.add_assistant(reply)
    step = rp.parse(reply.content)
    text = step.final if step.kind == "finish" else (reply.content or "").strip()
    ep.finish(
        text, reply.content, "final-answer-marker" if step.kind == "finish" else "raw", failed=step.kind != "finish"
    )


__all__ = ["run", "final_answer_without_tools"]
