"""The demo project: one benchmark per style (chainmark's own and the five seeds), real images, idempotent."""

from __future__ import annotations

import io

from PIL import Image
from sqlmodel import select, col

from annotation.demo import build_demo
from store import session_scope
from store.models import Asset, Benchmark, Checkpoint, OrderingConstraint, ReferenceStep, Task, TaskAsset
from store.queries import task_summaries
from tests.support.must import must


def test_demo_builds_every_style_and_is_idempotent(engine, blobs):
    with session_scope(engine, actor="demo") as s:
        first = build_demo(s, blobs)
    with session_scope(engine, actor="demo") as s:
        second = build_demo(s, blobs)
        formats = {b.source_format for b in s.exec(select(Benchmark)).all()}
        n_tasks = len(s.exec(select(Task)).all())
        n_assets = len(s.exec(select(Asset)).all())
    assert formats == {"chainmark", "gta", "agentic-mme", "vtc", "isg", "atp"}
    assert first.total_created == n_tasks >= 10
    assert second.total_created == 0 and sum(second.existing.values()) == n_tasks
    with session_scope(engine) as s:
        assert len(s.exec(select(Asset)).all()) == n_assets


def test_demo_tasks_have_images_chains_and_checkpoints(engine, blobs):
    with session_scope(engine) as s:
        build_demo(s, blobs)
    with session_scope(engine) as s:
        rows = {(r.benchmark, r.source_id): r for r in task_summaries(s)}
        mme = rows[("demo-agentic-mme", "0001")]
        assert (mme.steps, mme.checkpoints, mme.images) == (3, 3, 1)
        cps = s.exec(select(Checkpoint).where(Checkpoint.task_id == mme.id).order_by(col(Checkpoint.ordinal))).all()
        assert [c.axis for c in cps] == ["V", "V", "R"]
        gt = s.get(Asset, cps[1].gt_asset_id)
        crop = Image.open(io.BytesIO(blobs.get(must(gt).sha256)))
        # x: 640*440//1000=281 .. 640*640//1000=409 → 128 px; y: 420*340//1000=142 .. 420*520//1000=218 → 76 px; zoom 2
        assert crop.size == (256, 152)
        assert s.exec(select(OrderingConstraint).where(OrderingConstraint.task_id == mme.id)).one().max_gap == 2
        gta = rows[("demo-gta", "0")]
        steps = s.exec(
            select(ReferenceStep).where(ReferenceStep.task_id == gta.id).order_by(col(ReferenceStep.ordinal))
        ).all()
        assert [st.tool_name for st in steps[:2]] == ["OCR", "Calculator"] and steps[2].final_answer == "5.27"
        link = s.exec(select(TaskAsset).where(TaskAsset.task_id == gta.id)).one()
        receipt = Image.open(io.BytesIO(blobs.get(must(s.get(Asset, link.asset_id)).sha256)))
        assert receipt.size == (420, 360)
        assert rows[("demo-vtc", "ocr_1")].answer_kind == "mcq"
        assert rows[("demo-isg", "0000")].answer_kind == "interleaved"
        assert all(r.revision == 1 for r in rows.values())
