"""A task's tool list (issue 33): ``tasks add/edit --tool`` set the tools the model is offered, checked
against the benchmark's tool set, and the GTA export carries them as the task's ``tools``."""

from __future__ import annotations

import json
from pathlib import Path

from sqlmodel import Session

from store import make_engine
from store.models import Task
from tests.cli.test_cli import run
from tests.cli.test_cli_authoring import receipt


def offered(db: Path, task_id: int) -> list[str]:
    with Session(make_engine(db)) as s:
        task = s.get(Task, task_id)
        assert task is not None
        return list(task.tools_offered)


def test_tasks_add_and_edit_set_the_tool_list(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    made = run(db, "tasks", "add", "-b", "receipts", "-q", "Twice the total?", "--tool", "OCR",
               "--tool", "Calculator", "--tool", "OCR", "--json")  # fmt: skip
    task = json.loads(made.stdout)
    assert task["tools_offered"] == ["OCR", "Calculator"] and offered(db, task["id"]) == ["OCR", "Calculator"]
    run(db, "tasks", "edit", str(task["id"]), "--tool", "ImageDescription")
    assert offered(db, task["id"]) == ["ImageDescription"]
    assert "tools: ImageDescription" in run(db, "tasks", "show", str(task["id"])).output
    run(db, "tasks", "edit", str(task["id"]), "--all-tools")
    assert offered(db, task["id"]) == []


def test_a_tool_outside_the_benchmarks_tool_set_is_refused_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    refused = run(db, "tasks", "add", "-b", "receipts", "-q", "q", "--tool", "OCR", "--tool", "Teleport", ok=False)
    assert refused.exit_code == 1
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1 and "tool set 'gta' of benchmark 'receipts' has no tool 'Teleport'" in lines[0]
    assert "OCR" in lines[0].split("its tools:")[1]
    run(db, "tasks", "add", "-b", "receipts", "-q", "q", "--tool", "OCR")
    edit = run(db, "tasks", "edit", "1", "--tool", "Teleport", ok=False)
    assert edit.exit_code == 1 and len(edit.output.strip().splitlines()) == 1 and "'Teleport'" in edit.output
    assert offered(db, 1) == ["OCR"]


def export_authored_gta(tmp_path: Path) -> Path:
    """A GTA benchmark authored from the CLI (one task offered OCR and Calculator, an OCR step, the final
    answer), exported to ``tmp_path/out``; its database."""
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    made = run(db, "tasks", "add", "-b", "receipts", "-q", "Twice the total?", "--image",
               str(receipt(tmp_path / "r.png")), "--tool", "OCR", "--tool", "Calculator", "--json")  # fmt: skip
    task = json.loads(made.stdout)["id"]
    run(db, "chain", "add", str(task), "OCR", "--args", '{"image": "0"}')
    run(db, "chain", "final", str(task), "116")
    run(db, "export", "gta", str(tmp_path / "out"), "-b", "receipts")
    return db


def test_the_gta_export_offers_the_tasks_chosen_tools(tmp_path: Path) -> None:
    export_authored_gta(tmp_path)
    (record,) = json.loads((tmp_path / "out" / "dataset.json").read_text()).values()
    assert [t["name"] for t in record["tools"]] == ["OCR", "Calculator"]


def test_an_authored_gta_export_describes_its_tools_as_gta_does(tmp_path: Path) -> None:
    """An authored benchmark has no imported toolmeta: the export describes the tool set's tools (their
    descriptions and input/output metas), so each task's ``tools`` are complete and ``toolmeta.json`` is not
    empty; the export imports back with the same descriptions."""
    db = export_authored_gta(tmp_path)
    toolmeta = json.loads((tmp_path / "out" / "toolmeta.json").read_text())
    assert "Calculator" in toolmeta and "ImageDescription" in toolmeta  # the whole set, as GTA ships it
    assert toolmeta["OCR"]["inputs"] == [
        {"type": "image", "name": "image", "description": None, "optional": False, "default": None, "filetype": None}
    ]
    (record,) = json.loads((tmp_path / "out" / "dataset.json").read_text()).values()
    ocr, calculator = record["tools"]
    assert ocr == toolmeta["OCR"] and ocr["description"].startswith("This tool can recognize all text")
    assert calculator["inputs"][0]["name"] == "expression"
    run(db, "import", "gta", str(tmp_path / "out"), "-b", "again")
    run(db, "export", "gta", str(tmp_path / "out2"), "-b", "again")
    assert json.loads((tmp_path / "out2" / "toolmeta.json").read_text()) == toolmeta
