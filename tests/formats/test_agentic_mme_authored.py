"""An Agentic-MME task authored in chainmark (image, crop → search → answer chain, V and S checkpoints
linked to steps, a ground-truth crop, an ordering, a category and level) exports with its chain, links and
images in the task file and re-imports into a fresh database unchanged."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image
from sqlmodel import select

from annotation import tasks as authoring
from store.db import make_engine, session_scope
from store.models import Asset, Benchmark, OrderingConstraint, Task
from tests.cli.test_cli import run


def png(colour: str, size: tuple[int, int] = (64, 48)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, "PNG")
    return buf.getvalue()


def author_task(engine: Any, blobs: Any) -> None:
    """The task an annotator builds: one image, a crop step with its produced image, a search step, the
    final answer, checkpoints tied to the steps (the crop one with its ground-truth crop), an ordering."""
    with session_scope(engine, actor="annotator") as s:
        authoring.create_benchmark(s, "tails", "agentic-mme")
        spec = {"kind": "contains", "value": "1962"}
        task = authoring.create_task(s, "tails", "When was the airline founded?", answer_spec=spec)
        tid = task.id or 0
        authoring.edit_task(s, tid, category="Aviation", level="2")
        authoring.attach_asset(s, blobs, tid, png("white"), original_path="/home/ann/plane.png")
        crop = authoring.add_step(
            s, tid, tool_name="crop", tool_args={"image_index": 0, "bbox_2d": [600, 100, 900, 400]},
            result={"ok": "true", "op": "crop", "new_image_index": 1}, result_text="cropped the tail",
        )  # fmt: skip
        authoring.attach_asset(s, blobs, tid, png("red", (30, 30)), role="artifact", step_id=crop.id)
        search = authoring.add_step(
            s, tid, tool_name="google_search", tool_args={"query": "airline registration founded"},
            result_text="Founded in 1962.", thought="look the operator up",
        )  # fmt: skip
        authoring.add_step(s, tid, final_answer="1962")
        gt = authoring.attach_asset(s, blobs, tid, png("blue", (28, 28)), role="evidence")
        authoring.add_checkpoint(
            s, tid, "V1_crop_tail", axis="V", tools=["crop"], step_id=crop.id, gt_asset_id=gt.asset_id,
            description="Crop the tail so the registration is legible.",
            code_check={"tool": "crop", "verifier": "verify_crop_ast"},
            visual_check={"question": "Is the registration readable? Answer Yes or No.", "expected_answer": "Yes"},
        )  # fmt: skip
        authoring.add_checkpoint(
            s, tid, "S1_search_founding", axis="S", tools=["google_search"], step_id=search.id,
            description="Search the operator (expected to find: 1962)",
        )  # fmt: skip
        authoring.add_ordering_constraint(s, tid, ["V1_crop_tail", "S1_search_founding"], max_gap=2)


def snapshot(db: Path, benchmark: str) -> dict[str, Any]:
    """Everything an annotator authored on the benchmark's one task, with ids replaced by what they name."""
    engine = make_engine(db)
    try:
        with session_scope(engine) as s:
            bench = s.exec(select(Benchmark).where(Benchmark.name == benchmark)).one()
            task = s.exec(select(Task).where(Task.benchmark_id == bench.id)).one()
            tid = task.id or 0
            steps = authoring.steps_of(s, tid)
            ordinal = {st.id: st.ordinal for st in steps}
            sha = {a.id: a.sha256 for a in s.exec(select(Asset)).all()}
            return {
                "task": (task.query, task.answer_spec, task.category, task.level),
                "steps": [
                    (st.ordinal, st.tool_name, st.tool_args, st.result, st.result_text, st.thought, st.final_answer)
                    for st in steps
                ],
                "checkpoints": [
                    (
                        c.key,
                        c.axis,
                        c.tools,
                        c.description,
                        c.code_check,
                        c.visual_check,
                        c.search_check,
                        c.answer_check,
                        ordinal.get(c.step_id),
                        sha.get(c.gt_asset_id),
                    )  # fmt: skip
                    for c in authoring.checkpoints_of(s, tid)
                ],
                "orderings": sorted(
                    (o.key, o.sequence, o.max_gap)
                    for o in s.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == tid))
                ),
                "assets": sorted(
                    (link.role, sha[link.asset_id], ordinal.get(link.step_id)) for link in authoring.assets_of(s, tid)
                ),
            }
    finally:
        engine.dispose()


def test_an_authored_task_exports_its_chain_links_and_images_and_reimports_unchanged(
    engine: Any, blobs: Any, db_path: Path, tmp_path: Path
) -> None:
    author_task(engine, blobs)
    out = tmp_path / "out"
    run(db_path, "export", "agentic-mme", str(out), "-b", "tails")
    (file,) = sorted((out / "json").glob("*.json"))
    record = json.loads(file.read_text())

    assert record["meta"]["domain"] == "Aviation" and record["meta"]["level"] == 2
    chain = record["reference_chain"]
    assert [(st["index"], st.get("tool_name"), st.get("final_answer")) for st in chain] == [
        (0, "crop", None),
        (1, "google_search", None),
        (2, None, "1962"),
    ]
    assert chain[0]["arguments"] == {"image_index": 0, "bbox_2d": [600, 100, 900, 400]}
    (crop_out,) = chain[0]["output_paths"]
    assert Image.open(out / crop_out).size == (30, 30)
    v1, s1 = record["process_evaluation"]["checkpoints"]
    assert (v1["id"], v1["step"], s1["id"], s1["step"]) == ("V1_crop_tail", 0, "S1_search_founding", 1)
    assert v1["gt_image"].startswith("image_cause/") and Image.open(out / v1["gt_image"]).getpixel((0, 0)) == (
        0,
        0,
        255,
    )
    assert record["image_cause"] == [{"path": v1["gt_image"], "role": "evidence"}]
    ((seq, gap),) = [(o["sequence"], o["max_gap"]) for o in record["process_evaluation"]["ordering_constraints"]]
    assert (seq, gap) == (["V1_crop_tail", "S1_search_founding"], 2)
    assert record["golden_answer"] == {"value": "1962", "match_type": "contains"}
    assert (out / record["input"]["image"]).is_file()

    copy = tmp_path / "copy.db"
    run(copy, "import", "agentic-mme", str(out), "-b", "tails")
    assert snapshot(copy, "tails") == snapshot(db_path, "tails")


def test_importing_the_export_over_the_authored_task_keeps_its_links(
    engine: Any, blobs: Any, db_path: Path, tmp_path: Path
) -> None:
    """The export imported back over the task it came from (the update path) leaves it as authored."""
    author_task(engine, blobs)
    before = snapshot(db_path, "tails")
    run(db_path, "export", "agentic-mme", str(tmp_path / "out"), "-b", "tails")
    run(db_path, "import", "agentic-mme", str(tmp_path / "out"), "-b", "tails")
    assert snapshot(db_path, "tails") == before
