"""The acceptance walk: create a task → attach an image → run a tool in the chain builder → accept two
steps → add a V checkpoint on the produced crop → set the answer → submit; then check the exact rows."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image
from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import AuditEvent, Checkpoint, ReferenceStep, Task, TaskAsset
from tests.tui.conftest import png, settle, wait_for_saves
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.checkpoint_editor import CheckpointEditorScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.arg_form import ArgForm


async def test_full_authoring_flow(make_tui, engine, blobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
    image_path = tmp_path / "chart.png"
    image_path.write_bytes(png(400, 200))

    app = make_tui()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, app)
        # create the task
        await pilot.press("n")
        await settle(pilot, app)
        await pilot.press(*"How many white squares are there?")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, TaskEditorScreen)
        task_id = app.screen.task_id
        # attach the image
        await pilot.press("ctrl+o")
        await pilot.press(*str(image_path), "enter")
        await settle(pilot, app)
        assert app.screen.detail is not None and len(app.screen.detail.images) == 1

        # chain builder: crop with a region picked by keys
        await pilot.press("ctrl+b")
        await settle(pilot, app)
        builder = app.screen
        assert isinstance(builder, ChainBuilderScreen)
        assert builder.tool_name == "crop"
        form = builder.query_one(ArgForm)
        assert form.raw("image_index") == "0"
        await pilot.press("ctrl+l")
        await settle(pilot, app)
        # default box (250,250)-(750,750); move left twice by 25, then shrink width by 25
        await pilot.press("left", "left", "shift+left", "enter")
        await settle(pilot, app)
        assert form.values()["bbox_2d"] == [200, 250, 675, 750]
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert builder.pending is not None and builder.pending["result"].ok, builder.pending
        builder.query_one("#thought").value = "zoom on the square"
        await pilot.press("ctrl+s")
        await settle(pilot, app)

        # second step: rotate the crop (strip image 1) by 90 degrees
        builder.query_one("#palette").highlighted = 1
        await settle(pilot, app)
        assert builder.tool_name == "rotate"
        builder.query_one("#strip").highlighted = 1
        await settle(pilot, app)
        assert form.raw("image_index") == "1"
        form.set_value("angle", 90)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert builder.pending["result"].ok, builder.pending["result"].error
        await pilot.press("ctrl+s")
        await settle(pilot, app)

        # V checkpoint from step 1, with the crop as ground truth
        steps = builder.query_one("#step-list")
        steps.focus()
        steps.highlighted = 0
        await pilot.press("c")
        await settle(pilot, app)
        assert isinstance(app.screen, CheckpointEditorScreen)
        app.screen.query_one("#cp-v_question").value = "Is there a white square?"
        app.screen.query_one("#cp-v_answer").value = "yes"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)

        # answer spec, then submit
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        editor.query_one("#answer-kind").value = "exact"
        await settle(pilot, app)
        editor.query_one("#answer-value").value = "1"
        await wait_for_saves(pilot, app)  # edits save after a pause in typing
        await settle(pilot, app)
        await pilot.press("ctrl+s")
        await settle(pilot, app)

    with session_scope(engine) as s:
        task = s.get(Task, task_id)
        assert task is not None
        assert (task.query, task.status, task.answer_spec) == (
            "How many white squares are there?",
            "submitted",
            {"kind": "exact", "value": "1"},
        )
        steps = s.exec(
            select(ReferenceStep).where(ReferenceStep.task_id == task_id).order_by(ReferenceStep.ordinal)
        ).all()
        assert [(st.ordinal, st.tool_name, st.tool_args, st.thought) for st in steps] == [
            (0, "crop", {"image_index": 0, "bbox_2d": [200, 250, 675, 750], "zoom_scale": 1}, "zoom on the square"),
            (1, "rotate", {"image_index": 1, "angle": 90}, None),
        ]
        links = s.exec(select(TaskAsset).where(TaskAsset.task_id == task_id).order_by(TaskAsset.id)).all()
        assert [(link.role, link.step_id) for link in links] == [
            ("query_image", None),
            ("artifact", steps[0].id),
            ("artifact", steps[1].id),
        ]
        assert links[0].original_path == str(image_path)
        crop = Image.open(io.BytesIO(blobs.get(_sha(s, links[1].asset_id))))
        assert crop.size == (190, 100)  # 400×200 image, x 80..270, y 50..150
        rotated = Image.open(io.BytesIO(blobs.get(_sha(s, links[2].asset_id))))
        assert rotated.size == (100, 190)
        cps = s.exec(select(Checkpoint).where(Checkpoint.task_id == task_id)).all()
        assert len(cps) == 1
        cp = cps[0]
        assert (cp.key, cp.axis, cp.step_id, cp.gt_asset_id, cp.tools, cp.visual_check, cp.weight) == (
            "cp1",
            "V",
            steps[0].id,
            links[1].asset_id,
            ["crop"],
            {"question": "Is there a white square?", "expected_answer": "yes"},
            1.0,
        )
        assert steps[0].result["asset_ids"] == [links[1].asset_id]
        # every edit went through the audit trail as the acting user
        actors = set(
            s.exec(select(AuditEvent.actor).where(AuditEvent.entity == "task", AuditEvent.entity_id == task_id)).all()
        )
        assert actors == {"tester"}


def _sha(session, asset_id: int) -> str:  # type: ignore[no-untyped-def]
    from store.models import Asset

    asset = session.get(Asset, asset_id)
    assert asset is not None
    return asset.sha256
