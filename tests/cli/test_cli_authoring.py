"""The CLI authors what the TUI authors (issue 33): a task's images, its reference chain recorded by running
real tools (OCR reads the picture, Calculator computes), the final answer, checkpoints and their order."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont
from sqlmodel import Session, col, select

from store import make_engine
from store.models import Checkpoint, OrderingConstraint, ReferenceStep, TaskAsset
from tests.cli.test_cli import run


def receipt(path: Path, text: str = "TOTAL 58") -> Path:
    im = Image.new("RGB", (320, 120), "white")
    ImageDraw.Draw(im).text((20, 40), text, fill="black", font=ImageFont.load_default(size=40))
    im.save(path)
    return path


def test_a_gta_task_is_authored_end_to_end_from_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    spec = '{"kind": "whitelist", "groups": [["116"]]}'
    made = run(db, "tasks", "add", "-b", "receipts", "-q", "Twice the total?", "--answer", spec, "--image",
               str(receipt(tmp_path / "r.png")), "--json")  # fmt: skip
    task = json.loads(made.stdout)["id"]
    ocr = json.loads(run(db, "chain", "add", str(task), "OCR", "--args", '{"image": "0"}', "--json").stdout)
    assert ocr["tool_set"] == "gta" and "TOTAL 58" in ocr["result"]
    calc = run(db, "chain", "add", str(task), "Calculator", "--args", '{"expression": "58*2"}', "--thought", "x2")
    assert "116" in calc.output
    run(db, "chain", "final", str(task), "116")
    run(db, "checkpoints", "add", str(task), "V1", "--tools", "OCR", "--step", "0")
    run(db, "checkpoints", "add", str(task), "V2", "--tools", "Calculator", "--step", "1")
    run(db, "checkpoints", "order", str(task), "V1", "V2", "--max-gap", "0")
    with Session(make_engine(db)) as s:
        steps = s.exec(
            select(ReferenceStep).where(ReferenceStep.task_id == task).order_by(col(ReferenceStep.ordinal))
        ).all()
        assert [(st.tool_name, st.tool_args, st.is_final) for st in steps] == [
            ("OCR", {"image": "0"}, False),
            ("Calculator", {"expression": "58*2"}, False),
            (None, None, True),
        ]
        assert (
            "TOTAL 58" in (steps[0].result_text or "") and steps[1].thought == "x2" and steps[2].final_answer == "116"
        )
        image = s.exec(select(TaskAsset).where(TaskAsset.task_id == task)).one()
        assert (image.role, image.original_path) == ("query_image", "image/image_0.png")
        cps = s.exec(select(Checkpoint).where(Checkpoint.task_id == task).order_by(col(Checkpoint.ordinal))).all()
        assert [(c.key, c.axis, c.tools, c.step_id) for c in cps] == [
            ("V1", "V", ["OCR"], steps[0].id),
            ("V2", "V", ["Calculator"], steps[1].id),
        ]
        order = s.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == task)).one()
        assert (order.sequence, order.max_gap) == (["V1", "V2"], 0)


def test_a_failing_tool_call_records_nothing_and_says_why_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    run(db, "tasks", "add", "-b", "receipts", "-q", "q", "--image", str(receipt(tmp_path / "r.png")))
    bad_index = run(db, "chain", "add", "1", "OCR", "--args", '{"image": "7"}', ok=False)
    assert bad_index.exit_code == 1
    assert bad_index.output.strip().splitlines() == [
        "Error: OCR failed, nothing recorded: image: invalid image index 7; valid indices: 0-0"
    ]
    unknown = run(db, "chain", "add", "1", "Nope", ok=False)
    assert unknown.exit_code == 1 and "has no tool 'Nope'" in unknown.output
    not_json = run(db, "chain", "add", "1", "OCR", "--args", "{image", ok=False)
    assert not_json.exit_code == 2 and "not valid JSON" in not_json.output
    with Session(make_engine(db)) as s:
        assert s.exec(select(ReferenceStep)).all() == []


def test_a_file_that_is_not_an_image_is_refused_by_its_name(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")
    out = run(db, "tasks", "add", "-b", "receipts", "-q", "q", "--image", str(notes), ok=False)
    assert out.exit_code == 1 and f"{notes} is not an image" in out.output
    assert json.loads(run(db, "tasks", "list", "--json").stdout) == []
