"""A task whose input image file was deleted fails on its own, with the reason, and the run goes on.

Before, the batch reader raised on the missing blob and the whole run stopped: every other task was left
unrun (and at first the run was even recorded as ``cancelled``). Now the trajectory of that task fails
with the file named and no model call paid for; ``--retry-failed`` redoes it once the file is back."""

from __future__ import annotations

import hashlib

from annotation import tasks as authoring
from evaluation.harness import RunSpec, start_run
from store import session_scope
from store.models import Run, Trajectory
from sqlmodel import select
from tests.harness.conftest import png
from tests.support.scripted_openai import ScriptedOpenAI, text


def test_a_task_whose_image_file_is_gone_fails_alone_and_says_which(  # type: ignore[no-untyped-def]
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI
) -> None:
    lost = make_bench("mme", n=2)  # both tasks share one image: its file goes
    with session_scope(engine, "tester") as s:
        kept = authoring.create_task(s, "mme", "What colour is the left half? (intact)")
        kept_id = int(kept.id or 0)
        authoring.attach_asset(s, blobs, kept_id, png(120, 80), original_path="image/intact.png")
    blobs.path_of(hashlib.sha256(png(100, 80)).hexdigest()).unlink()
    scripted_openai.push(text("<answer>red</answer>"))

    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=2))

    assert (progress.done, progress.failed) == (1, 2)
    assert len(scripted_openai.chat_requests()) == 1  # no model call for a task without its image
    with session_scope(engine) as s:
        run = s.exec(select(Run)).one()
        assert run.status == "done"  # every trajectory finished; nothing was cancelled or left running
        trajs = {t.task_id: t for t in s.exec(select(Trajectory).where(Trajectory.run_id == run.id))}
    assert trajs[kept_id].status == "done"
    for i, task_id in enumerate(lost):
        error = trajs[task_id].error or ""
        assert trajs[task_id].status == "failed"
        assert f"image/image_{i}_0.png" in error and "missing from the blob store" in error, error
