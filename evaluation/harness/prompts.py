"""The instructions each mode gives the model. A benchmark may override any of them through
``Benchmark.settings["prompts"][<mode>]`` (a string with the same ``{placeholders}``); the text used
is hashed into the run's ``prompt_version`` so results always say which prompt produced them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

ATOMIC_INDEXED = """You solve visual questions by calling image tools step by step.
Images are numbered: image_index 0 is the original image; every tool call that produces an image adds
the next index (1, 2, ...), and the new image is shown to you after the call.
Bounding boxes use coordinates normalised to 0-1000: [x1, y1, x2, y2].
Call one or more tools when they help; look at each result before deciding the next step.
You have at most {max_tool_calls} tool calls.
Provide your final answer with this REQUIRED format: <answer>YOUR_FINAL_ANSWER</answer>"""

ATOMIC_FILES = """You solve tasks by calling the tools you are given, step by step.
Tools that take an image take its file name; the files of this task are listed in the user message,
and images produced by tools are reported with their new file names.
Look at each result before deciding the next step. You have at most {max_tool_calls} tool calls.
Provide your final answer with this REQUIRED format: <answer>YOUR_FINAL_ANSWER</answer>"""

CODE = """You solve visual questions by writing Python code that processes images.
Each reply contains, in this order: optional reasoning in <think>...</think>, then EITHER one block of
Python in <code>...</code> OR your final answer in <answer>...</answer> - never both in one reply.
The code runs in a fresh Python process (PIL, numpy and cv2 are available; no network):
- the original image is at the path in the environment variable ORIGINAL_IMAGE_PATH
  (also LOCAL_INPUT_IMAGE_PATH);
- save every image you produce into the folder PROCESSED_IMAGE_SAVE_PATH as transformed_image_N.png
  (N = 1, 2, ...); saved images are shown to you after the run, with what the code printed.
{search_note}Provide your final answer with this REQUIRED format: <answer>YOUR_FINAL_ANSWER</answer>"""

CODE_SEARCH_NOTE = "Web search tools are available as function calls.\n"

FINAL_ANSWER_REQUEST = (
    "You have used your budget of tool calls or rounds. Do not call any tools. Based on what "
    "you have so far, give your final answer now with this REQUIRED format: "
    "<answer>YOUR_FINAL_ANSWER</answer>"
)

CODE_FORMAT_REMINDER = (
    "Your reply had neither a <code> block nor an <answer>. Reply with <code>...</code> to run "
    "code, or give the final answer as <answer>...</answer>."
)

PLAN = """You write helpful answers that interleave text with images. You cannot draw images yourself; wherever an
image would help, insert a tool call that obtains it, written exactly as
<tool>{{"tool_name": "<one of the tools>", "description": "<what the image should show and why>", "params": {{...}}}}</tool>
The tool calls are planned, not executed: place each one where its image belongs in the answer.
Available tools:
{tool_list}
Use tools only where an image adds real value; refer to images of the documents by their img_index."""

# GTA's ReAct protocol: the markers (Thought / Action / Action Input / Response / Final Answer) and the
# layout are the reference agent's (seed_formats.md §1.3); the wording is ours. A team that needs the
# reference text verbatim can set it per benchmark in ``Benchmark.settings["prompts"]["react"]``.
REACT = """You are an assistant that can call external tools.
{tool_description}
When you want to call a tool, reply in exactly this layout:
```
Thought:what you still need to find out, and whether a tool helps
Action:the name of the tool, one of [{action_names}]
Action Input:the tool's input
```
The tool's output then comes back to you in this layout:
```
Response:what the tool returned.
```
Once you know the answer, or if no tool is needed, reply in this layout instead:
```
Thought:how you reached the final answer
Final Answer:the final answer
```
Begin!"""

GTA_SUMMARISE = "Please summarize the chat history and give a final answer. Do not call any tools."

DEFAULTS = {
    "atomic": ATOMIC_INDEXED,
    "atomic_files": ATOMIC_FILES,
    "code": CODE,
    "plan": PLAN,
    "react": REACT,
    "step": REACT,
}


def prompt_for(key: str, settings: dict[str, Any] | None) -> str:
    overrides = (settings or {}).get("prompts") or {}
    return str(overrides.get(key) or DEFAULTS[key])


def prompt_version(mode: str, settings: dict[str, Any] | None) -> str:
    keys = [k for k in DEFAULTS if k == mode or k.startswith(mode + "_")]
    text = json.dumps({k: prompt_for(k, settings) for k in keys}, sort_keys=True)
    return f"{mode}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
