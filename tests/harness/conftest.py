"""Harness tests use the scripted OpenAI-compatible server shipped in tests/support, and build their
benchmarks with the authoring API (tests may import annotation; evaluation may not)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image
from sqlalchemy.engine import Engine

from annotation import tasks as authoring
from evaluation.harness import add_endpoint
from store import session_scope
from tests.support.scripted_openai import ScriptedOpenAI, scripted_openai  # noqa: F401  (registers the fixture)
from tests.support.must import must


def png(width: int = 100, height: int = 80, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A test image: left half ``color``, right half blue, so crops are checkable by pixel."""
    im = Image.new("RGB", (width, height), (20, 40, 220))
    im.paste(Image.new("RGB", (width // 2, height), color), (0, 0))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def make_bench(engine: Engine, blobs: Any) -> Callable[..., list[int]]:
    """``make_bench(name, tool_set, n=1, images=1, answer=..., **task_fields)`` → task ids."""

    def make(
        name: str = "bench",
        tool_set: str | None = "agentic-mme",
        n: int = 1,
        images: int = 1,
        source_format: str = "chainmark",
        answer: dict[str, Any] | None = None,
        **fields: Any,
    ) -> list[int]:
        ids = []
        with session_scope(engine, "tester") as s:
            authoring.ensure_benchmark(s, name, source_format, tool_set=tool_set)
            for i in range(n):
                t = authoring.create_task(
                    s,
                    name,
                    f"What colour is the left half? (task {i})",
                    answer_spec=answer or {"kind": "contains", "value": "red"},
                    **fields,
                )
                for k in range(images):
                    authoring.attach_asset(
                        s, blobs, must(t.id), png(100 + k, 80), original_path=f"image/image_{i}_{k}.png"
                    )
                ids.append(t.id)
        return ids

    return make


@pytest.fixture
def endpoint(engine: Engine, scripted_openai: ScriptedOpenAI) -> str:
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "scripted", scripted_openai.base_url, "scripted-model", params={"temperature": 0})
    return "scripted"


@pytest.fixture(autouse=True)
def events_fit_their_schema(request: pytest.FixtureRequest) -> Any:
    """Every event any harness test wrote (each mode, errors, resumes) has the payload shape that
    ``chainmark schema events`` publishes: the schema is checked against what the harness really writes."""
    uses_db = "engine" in request.fixturenames
    db_path = request.getfixturevalue("db_path") if uses_db else None
    yield
    if db_path is None or not db_path.exists():
        return
    import json
    import sqlite3

    from store.schemas import event_problems

    with sqlite3.connect(db_path) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'event'").fetchone():
            return
        rows = conn.execute("SELECT id, kind, payload FROM event").fetchall()
    bad = [
        (eid, kind, problems)
        for eid, kind, payload in rows
        for problems in [event_problems(kind, json.loads(payload))]
        if problems
    ]
    assert not bad, f"events that do not fit `chainmark schema events`: {bad[:5]}"
