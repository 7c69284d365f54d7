"""A small benchmark and a recorded run with every event kind an exporter must translate: a user
message, a model reply with a tool call and token usage, the call, its result with an image, an
error, and the final answer (plus a second task that failed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annotation.formats import api
from annotation.formats.registry import get_format
from annotation.formats.runs import EventSpec, RunSpec, TrajectorySpec, write_run
from store import events as ev
from store import session_scope
from store.blobs import sha256_of
from tests.formats.fixtures import png, write_gta


@dataclass
class RecordedRun:
    db: Path
    run_id: int
    data: dict[str, Any]
    source_ids: list[str]
    result_png: bytes


def cli(db: Path, *args: str) -> Any:
    from tui.cli import cli as root

    return CliRunner().invoke(root, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)


def _spec(source_ids: list[str], image: bytes) -> RunSpec:
    first = TrajectorySpec(
        source_ids[0],
        "t0",
        [
            EventSpec(ev.USER_MESSAGE, {"role": "user", "content": "How many apples?"}),
            EventSpec(
                ev.MODEL_MESSAGE,
                {
                    "content": "Let me count.",
                    "reasoning": None,
                    "finish_reason": "tool_calls",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "name": "CountGivenObject",
                            "arguments": '{"image": "a.png", "text": "apple"}',
                            "parsed": {"image": "a.png", "text": "apple"},
                        }
                    ],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
                },
            ),
            EventSpec(ev.TOOL_CALL, ev.tool_call("CountGivenObject", {"image": "a.png", "text": "apple"}, "c1")),
            EventSpec(ev.TOOL_RESULT, ev.tool_result("CountGivenObject", "3", call_id="c1"), assets=[image]),
            EventSpec(ev.ERROR, {"type": "Timeout", "message": "OCR took too long"}),
            EventSpec(
                ev.MODEL_MESSAGE,
                {
                    "content": "There are 3 apples.",
                    "reasoning": None,
                    "tool_calls": [],
                    "finish_reason": "stop",
                    "usage": {"prompt_tokens": 200, "completion_tokens": 10, "total_tokens": 210},
                },
            ),
            EventSpec(ev.ANSWER, ev.answer("3")),
        ],
        final_answer="3",
        usage={"prompt_tokens": 320, "completion_tokens": 40, "total_tokens": 360, "tool_calls": 1, "latency_s": 1.25},
    )
    second = TrajectorySpec(
        source_ids[1],
        "t1",
        [
            EventSpec(ev.USER_MESSAGE, {"role": "user", "content": "What colour?"}),
        ],
        status="failed",
        error="budget exhausted",
        usage={"prompt_tokens": 50},
    )
    return RunSpec("atomic", [first, second], name="interop run")


@pytest.fixture
def recorded_run(tmp_path: Path, engine: Any, blobs: Any) -> RecordedRun:
    data = write_gta(tmp_path / "gta", n=2)
    api.import_dataset(engine, blobs, "gta", tmp_path / "gta")
    source_ids = sorted(data)[:2]
    image = png(77)
    with session_scope(engine, "tester") as s:
        summary = write_run(s, blobs, get_format("gta"), _spec(source_ids, image), "gta", "test")
    return RecordedRun(tmp_path / "chainmark.db", summary.run_id, data, source_ids, image)


__all__ = ["RecordedRun", "cli", "recorded_run", "sha256_of"]
