"""`chainmark export-run inspect` / `import-run inspect`: a run as an Inspect AI eval log, checked with
inspect-ai's own reader (samples, messages, tool calls, scores, usage), and an Inspect log back in as
a run with the same events."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from store import session_scope
from store.blobs import sha256_of
from store.models import Asset, Checkpoint, CheckpointResult, Trajectory
from tests.formats.conftest import run_events
from tests.interop.conftest import RecordedRun, cli

pytestmark = pytest.mark.usefixtures("inspect_log")


@pytest.fixture(scope="module")
def inspect_log() -> Any:
    """Imported when a test here runs, not when the suite is collected (seconds, on every worker)."""
    return pytest.importorskip("inspect_ai.log", reason="inspect-ai comes with the 'interop' extra")


def _score(engine: Any, recorded: RecordedRun) -> None:
    """Two checkpoints on the first task, one passed: the sample's score is 0.5."""
    with session_scope(engine) as s:
        traj = s.exec(
            select(Trajectory).where(Trajectory.run_id == recorded.run_id).order_by(col(Trajectory.id))
        ).first()
        assert traj is not None and traj.id is not None
        for key, passed in (("count-tool", True), ("answer", False)):
            cp = Checkpoint(task_id=traj.task_id, key=f"interop-{key}", axis="V")
            s.add(cp)
            s.flush()
            assert cp.id is not None
            s.add(CheckpointResult(trajectory_id=traj.id, checkpoint_id=cp.id, passed=passed))


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_inspect_reads_the_export(
    recorded_run: RecordedRun, engine: Any, tmp_path: Path, suffix: str, inspect_log: Any
) -> None:
    _score(engine, recorded_run)
    out = tmp_path / f"run{suffix}"
    res = cli(recorded_run.db, "export-run", "inspect", str(recorded_run.run_id), str(out))
    assert res.exit_code == 0, res.output
    log = inspect_log.read_eval_log(str(out), resolve_attachments=True)
    assert log.status == "success" and log.eval.task == "gta"
    assert len(log.samples) == 2 and log.results.total_samples == 2 and log.results.completed_samples == 1
    assert log.results.scores[0].metrics["mean"].value == 0.5
    samples = {s.id: s for s in log.samples}
    first, second = samples[recorded_run.source_ids[0]], samples[recorded_run.source_ids[1]]
    assert [m.role for m in first.messages] == ["user", "assistant", "tool", "assistant"]
    assert first.messages[0].text == "How many apples?"
    call = first.messages[1].tool_calls[0]
    assert (call.id, call.function, call.arguments) == ("c1", "CountGivenObject", {"image": "a.png", "text": "apple"})
    assert first.messages[2].text == "3" and first.messages[2].tool_call_id == "c1"
    image = first.messages[2].content[-1]  # the tool's output image, inlined as Inspect logs do
    assert image.type == "image" and image.image.startswith("data:image/png;base64,")
    assert base64.b64decode(image.image.split(",", 1)[1]) == recorded_run.result_png
    assert first.messages[3].text == "There are 3 apples."
    assert first.output.completion == "3"
    score = first.scores["chainmark_checkpoints"]
    assert score.value == 0.5 and score.metadata["checkpoints"] == {"interop-count-tool": True, "interop-answer": False}
    assert second.scores is None and second.output.completion == "" and not second.output.choices
    usage = next(iter(first.model_usage.values()))
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (320, 40, 360)
    assert first.metadata["chainmark"]["errors"] == ["Timeout: OCR took too long"]
    assert second.metadata["chainmark"]["status"] == "failed" and second.error.message == "budget exhausted"
    assert next(iter(log.stats.model_usage.values())).input_tokens == 370


def test_an_inspect_log_comes_in_as_a_run(recorded_run: RecordedRun, engine: Any, tmp_path: Path) -> None:
    out = tmp_path / "run.eval"
    assert cli(recorded_run.db, "export-run", "inspect", str(recorded_run.run_id), str(out)).exit_code == 0
    res = cli(recorded_run.db, "import-run", "inspect", str(out), "--benchmark", "gta", "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["trajectories"] == 2
    events = run_events(engine, summary["run_id"])
    with session_scope(engine) as s:
        trajs = {t.task_id: t for t in s.exec(select(Trajectory).where(Trajectory.run_id == summary["run_id"]))}
        first_task = next(t for t, tr in trajs.items() if tr.final_answer == "3")
        usage = trajs[first_task].usage
    kinds = [k for k, _, _ in events[first_task]]
    assert kinds == ["user_message", "model_message", "tool_call", "tool_result", "model_message", "answer"]
    call = events[first_task][2][1]
    assert (call["name"], call["arguments"], call["call_id"]) == (
        "CountGivenObject",
        {"image": "a.png", "text": "apple"},
        "c1",
    )
    assert events[first_task][3][1]["text"] == "3" and events[first_task][5][1]["text"] == "3"
    with session_scope(engine) as s:  # the tool's image came back as the same blob
        (asset_id,) = events[first_task][3][1]["asset_ids"]
        asset = s.get(Asset, asset_id)
        assert asset is not None and asset.sha256 == sha256_of(recorded_run.result_png)
    assert (usage["prompt_tokens"], usage["total_tokens"], usage["tool_calls"]) == (320, 360, 1)
    (second_task,) = [t for t in trajs if t != first_task]
    assert [k for k, _, _ in events[second_task]] == ["user_message", "error"]  # no answer: none invented
    assert events[second_task][1][1]["message"] == "budget exhausted"
    assert (trajs[second_task].final_answer, trajs[second_task].status, trajs[second_task].error) == (
        None,
        "failed",
        "budget exhausted",
    )


def test_a_file_that_is_not_a_log_is_one_line(recorded_run: RecordedRun, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 2, "eval": 5}')
    res = cli(recorded_run.db, "import-run", "inspect", str(bad), "--benchmark", "gta")
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.startswith("Error: ") and "bad.json: not an Inspect eval log" in res.output


def test_a_hostile_image_in_a_log_is_refused(recorded_run: RecordedRun, tmp_path: Path, inspect_log: Any) -> None:
    model = pytest.importorskip("inspect_ai.model")
    out = tmp_path / "run.json"
    assert cli(recorded_run.db, "export-run", "inspect", str(recorded_run.run_id), str(out)).exit_code == 0
    log = inspect_log.read_eval_log(str(out))
    log.samples[0].messages[0] = model.ChatMessageUser(
        content=[
            model.ContentText(text="look"),
            model.ContentImage(image="data:image/png;base64," + base64.b64encode(b"no").decode()),
        ]
    )
    inspect_log.write_eval_log(log, str(out), format="json")
    res = cli(recorded_run.db, "import-run", "inspect", str(out), "--benchmark", "gta")
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert f"sample {log.samples[0].id}" in res.output and "is not a readable image" in res.output, res.output
