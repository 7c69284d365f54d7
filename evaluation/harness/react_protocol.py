"""GTA's ReAct text protocol (lagent ReAct as GTA runs it, seed_formats.md §1.3): the system prompt
with the tool list, the parser, and the rendering of tool results and gold steps."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evaluation.harness import prompts
from store import safe_json

_ACTION = re.compile(r"Action:(.*?)\n")
_ACTION_INPUT = re.compile(r"Action Input:(.*)", re.DOTALL)
_THOUGHT = re.compile(r"Thought:(.*?)(?:\nAction:|\nFinal Answer:|\Z)", re.DOTALL)
FINISH = "Final Answer:"


@dataclass
class ReactStep:
    kind: str  # "finish" | "action" | "invalid"
    thought: str
    action: str = ""
    action_input: str = ""
    final: str = ""
    error: str = ""


def parse(text: str | None) -> ReactStep:
    """Final Answer wins; else the LAST ``Action:`` line and the LAST ``Action Input:`` (to the end)."""
    text = text or ""
    tm = _THOUGHT.search(text)
    thought = tm.group(1).strip() if tm else ""
    if FINISH in text:
        return ReactStep("finish", thought, final=text.split(FINISH, 1)[1].strip())
    actions = _ACTION.findall(text + "\n")
    inputs = _ACTION_INPUT.findall(text)
    if not actions:
        return ReactStep(
            "invalid",
            thought or text.strip(),
            error="no 'Action:' and no 'Final Answer:' in the reply; follow the format",
        )
    action_input = inputs[-1].strip() if inputs else ""
    if action_input.startswith("```"):
        action_input = action_input.strip("`").removeprefix("json").strip()
    return ReactStep("action", thought, action=actions[-1].strip(), action_input=action_input)


def parse_action_input(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    if not raw:
        return {}, None
    try:
        value = safe_json.loads(raw)
    except ValueError as exc:
        return None, f"Action Input is not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, "Action Input must be a JSON object of the tool's arguments"
    return value, None


def tool_description(tools: list[Any]) -> str:
    """lagent's ``get_actions_info``: name, description, parameters [{name, description, type}], required."""
    out = []
    for t in tools:
        props = t.parameters.get("properties") or {}
        inputs = (t.meta or {}).get("inputs")
        if inputs:
            params = [
                {"name": p.get("name"), "description": p.get("description"), "type": p.get("type")} for p in inputs
            ]
            required = [p.get("name") for p in inputs if not p.get("optional")]
        else:
            params = [{"name": k, "description": v.get("description"), "type": v.get("type")} for k, v in props.items()]
            required = list(t.parameters.get("required") or [])
        out.append({"name": t.name, "description": t.description, "parameters": params, "required": required})
    return json.dumps(out, ensure_ascii=False)


def system_prompt(tools: list[Any], settings: dict[str, Any] | None, key: str = "react") -> str:
    return prompts.prompt_for(key, settings).format(
        tool_description=tool_description(tools), action_names=", ".join(t.name for t in tools)
    )


def files_message(names: list[str]) -> str:
    return "The related files are at " + ", ".join(f"`{n}`" for n in names)


def render_result(text: str, image_names: list[str]) -> str:
    """Text items verbatim, image items as ``[image](path)``."""
    parts = [text] if text else []
    parts += [f"[image]({n})" for n in image_names]
    return "\n".join(parts)


def render_gold_call(thought: str | None, name: str, args: Any) -> str:
    args_text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return f"Thought:{thought or ''}\nAction:{name}\nAction Input:{args_text}"
