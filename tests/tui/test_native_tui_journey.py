"""Your own benchmark, begun in the TUI and finished from the CLI (issue 33's journey): the new-benchmark
form makes a native benchmark with the GTA tools, the new-task dialog adds its first task; the CLI gives it
an image, a reference step and an answer spec, a model runs on it against the scripted server and the task
scores; the benchmark exports to chainmark's own format and imports back unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.widgets import Select

from tests.cli.test_cli import run
from tests.cli.test_cli_authoring import receipt
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls
from tests.tui.conftest import settle, wait_for_saves
from tests.tui.test_new_benchmark import open_form
from tui.screens.home import HomeScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.selection import chosen

QUERY = "What is the receipt's total?"


async def _begin_in_the_tui(make_tui, image: Path) -> None:  # type: ignore[no-untyped-def]
    """Keyboard only: ``b`` → name ``mine`` (chainmark, the first format) with the GTA tools → ``n`` → a query
    → the task editor: ``ctrl+o`` attaches the image."""
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_form(pilot, app)
        await pilot.press(*"mine", "tab", "tab", "enter", "down", "enter")  # tool set: none → gta
        await settle(pilot, app)
        assert (chosen(form.query_one("#format", Select)), chosen(form.query_one("#tool-set", Select))) == (
            "chainmark",
            "gta",
        )
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("n")
        await settle(pilot, app)
        await pilot.press(*QUERY, "ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        await pilot.press(*str(image), "enter")
        await settle(pilot, app)
        await wait_for_saves(pilot, app)


def model(req: Any) -> Any:
    """Reads the receipt with OCR, then answers."""
    if not any(m.get("role") == "tool" for m in req.messages):
        return tool_calls(("OCR", {"image": "0"}))
    return text("<answer>The total is 15.80</answer>")


def test_a_native_benchmark_begun_in_the_tui_is_finished_run_scored_and_round_tripped(
    make_tui, db_path: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(_begin_in_the_tui(make_tui, receipt(tmp_path / "r.png")))  # the CLI below runs its own loops
    (task,) = json.loads(run(db_path, "tasks", "list", "-b", "mine", "--json").stdout)
    assert task["query"] == QUERY
    bench = {b["name"]: b for b in json.loads(run(db_path, "benchmarks", "list", "--json").stdout)}["mine"]
    assert (bench["source_format"], bench["tool_set"]) == ("chainmark", "gta")
    tid = str(task["id"])
    run(db_path, "tasks", "edit", tid, "--answer", '{"kind": "contains", "value": "15.80"}', "--tool", "OCR")
    assert task["images"] == 1
    run(db_path, "chain", "add", tid, "OCR", "--args", '{"image": "0"}')
    run(db_path, "chain", "final", tid, "15.80")
    with ScriptedOpenAI() as server:
        server.handler = model
        run(db_path, "endpoints", "add", "sc", "--base-url", server.base_url, "--model", "m")
        summary = json.loads(run(db_path, "run", "-b", "mine", "-e", "sc", "-m", "atomic", "--json").stdout)
    assert (summary["done"], summary["failed"]) == (1, 0)
    score = json.loads(run(db_path, "score", str(summary["run_id"]), "--json", "--per-item").stdout)
    assert score["per_item"][0]["answer"] == {"kind": "contains", "correct": True}
    assert score["per_item"][0]["chain"]["steps"][0]["tool"] is True
    run(db_path, "export", "chainmark", str(tmp_path / "out"), "-b", "mine")
    other = tmp_path / "other.db"
    run(other, "import", "chainmark", str(tmp_path / "out"), "-b", "mine")
    run(other, "export", "chainmark", str(tmp_path / "again"), "-b", "mine")
    for name in ("tasks.jsonl", "benchmark.json"):
        assert (tmp_path / "again" / name).read_text() == (tmp_path / "out" / name).read_text(), name
