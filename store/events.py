"""The shapes of trajectory events: one vocabulary for the harness that writes them, the scorers that
read them and the importers/exporters that translate them to and from other harnesses' logs.

An ``Event`` row has ``kind`` (one of the constants below) and a JSON ``payload`` with the keys listed
here. Extra keys are allowed (e.g. ``native`` for a record copied verbatim from another harness).
Images are never inlined: payloads carry ``asset_ids`` (Asset rows) and, where the protocol has one,
the ``image_index`` the model sees.
"""

from __future__ import annotations

from typing import Any

USER_MESSAGE = "user_message"
"""What was sent to the model: ``{"role": "user"|"system", "content": str | list[part]}``."""

MODEL_MESSAGE = "model_message"
"""A model reply: ``{"content": str|None, "reasoning": str|None, "tool_calls": [{"id", "name",
"arguments": str (raw), "parsed": dict|None}], "usage": {...}, "finish_reason": str|None}``."""

TOOL_CALL = "tool_call"
"""A call the harness executes (or records): ``{"call_id", "name", "arguments": dict, "raw_name"?}``;
``failed=True`` on the row when the call itself was invalid (unknown tool, bad JSON arguments)."""

TOOL_RESULT = "tool_result"
"""``{"call_id", "name", "ok": bool, "text": str, "data": dict, "asset_ids": [int],
"image_index"?: int, "error"?: str}``."""

CODE_EXEC = "code_exec"
"""Model-written code run in the sandbox: ``{"code", "stdout", "stderr", "exit_code", "timed_out",
"killed_reason"?, "ops": [{"op", "save", "line"}], "asset_ids": [int]}``."""

PLAN_CALL = "plan_call"
"""A planned, not executed, call (ATP ``<tool>`` tag): ``{"tool_name", "description", "params", "raw",
"valid": bool, "error"?: str, "position": int}`` (position = character offset in the answer)."""

STEP_PREDICTION = "step_prediction"
"""GTA step-by-step mode: ``{"gold_index": int, "prediction": {GTA predicted step dict}}``."""

ANSWER = "answer"
"""The final answer: ``{"text": str, "raw": str, "extracted_by": "tag"|"unclosed-tag"|"raw"|…}``."""

ERROR = "error"
"""Something failed and the run went on: ``{"type": str, "message": str}``."""

KINDS = (USER_MESSAGE, MODEL_MESSAGE, TOOL_CALL, TOOL_RESULT, CODE_EXEC, PLAN_CALL, STEP_PREDICTION, ANSWER, ERROR)


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "", **extra: Any) -> dict[str, Any]:
    return {"call_id": call_id, "name": name, "arguments": arguments, **extra}


def tool_result(
    name: str,
    text: str,
    *,
    call_id: str = "",
    ok: bool = True,
    data: dict[str, Any] | None = None,
    asset_ids: list[int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "call_id": call_id,
        "name": name,
        "ok": ok,
        "text": text,
        "data": data or {},
        "asset_ids": asset_ids or [],
        **extra,
    }


def answer(text: str, raw: str | None = None, extracted_by: str = "raw") -> dict[str, Any]:
    return {"text": text, "raw": text if raw is None else raw, "extracted_by": extracted_by}
