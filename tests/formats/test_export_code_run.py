"""An Agentic-MME code-mode run exported with `export-run` carries what the reference scorer reads:
``tool_images/`` with the images the code saved, the AST-traced image operations as
``python_image_processing`` entries (native calls, then ops, then code runs, numbered after joining),
and ``effective_tool_calls`` = native calls + traced ops. Read back as the reference reads a run
folder (`import-run` keeps the files verbatim and scores from them), it passes the same checkpoints
as the run itself. `export-run gta` refuses the run and names the right format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlmodel import select, col

from store import session_scope
from store.db import make_engine
from store.models import Checkpoint, CheckpointResult, Task, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, text
from tui.cli import cli

CODE = """<code>
import os
from PIL import Image, ImageEnhance
img = Image.open(os.environ['ORIGINAL_IMAGE_PATH'])
bright = ImageEnhance.Brightness(img).enhance(4.0)
bright.crop((0, 0, 40, 40)).save(os.path.join(os.environ['PROCESSED_IMAGE_SAVE_PATH'], 'transformed_image_1.png'))
</code>"""


def _handler(req: Any) -> Any:
    first_turn = not any(m["role"] == "assistant" for m in req.json["messages"])
    return text(CODE) if first_turn else text("<answer>27</answer>")


def _checkpoints(db: Path, run_id: int) -> dict[tuple[str, str], bool]:
    """(task source id, checkpoint key) → passed, as scoring wrote them."""
    with session_scope(make_engine(str(db))) as s:
        rows = s.exec(
            select(Task.source_id, Checkpoint.key, CheckpointResult.passed)
            .join(Trajectory, col(Trajectory.id) == col(CheckpointResult.trajectory_id))
            .join(Checkpoint, col(Checkpoint.id) == col(CheckpointResult.checkpoint_id))
            .join(Task, col(Task.id) == col(Trajectory.task_id))
            .where(Trajectory.run_id == run_id)
        ).all()
    return {(sid, key): passed for sid, key, passed in rows}


METRICS = ("Acc", "V", "V_tool", "V_true", "total_tool_calls", "avg_penalty", "checkpoint_pass_rate_50")


def test_code_mode_export_scores_the_same_as_the_run(tmp_path: Path) -> None:
    db = tmp_path / "cm.db"

    def run(*args: str) -> Any:
        r = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
        return r

    assert run("demo").exit_code == 0
    with ScriptedOpenAI(handler=_handler) as server:
        run("endpoints", "add", "local", "--base-url", server.base_url, "--model", "m")
        r = run("run", "-b", "demo-agentic-mme", "-e", "local", "-m", "code", "-j", "1")
        assert r.exit_code == 0, r.output
    run_id = r.stdout.splitlines()[0]
    out = tmp_path / "out"
    assert run("export-run", "agentic-mme", run_id, str(out)).exit_code == 0

    folder = out / "0001"
    assert (folder / "tool_images" / "transformed_image_1.png").is_file()
    uses = json.loads((folder / "tool_use_list.json").read_text())
    assert [(u["index"], u["tool_name"], u["arguments"].get("op")) for u in uses] == [
        (0, "python_image_processing", "enhance"),
        (1, "python_image_processing", "crop"),
        (2, "run_visual_processing_code", None),
    ]
    assert uses[1]["output"]["output_path"] == "tool_images/transformed_image_1.png"
    meta = json.loads((folder / "run_meta.json").read_text())
    assert meta["mode"] == "general" and meta["effective_tool_calls"] == 2 and meta["total_images"] == 1

    ours = json.loads(run("score", run_id, "--json").stdout)
    imported = json.loads(
        run("import-run", "agentic-mme", str(out), "--benchmark", "demo-agentic-mme", "--json").stdout
    )
    theirs = json.loads(run("score", str(imported["run_id"]), "--json").stdout)
    mine, reread = _checkpoints(db, int(run_id)), _checkpoints(db, int(imported["run_id"]))
    assert mine and mine == reread
    assert mine[("0001", "cp1")] is True  # require_op:enhance passes on both sides
    assert {k: ours["metrics"][k] for k in METRICS} == {k: theirs["metrics"][k] for k in METRICS}
    assert ours["metrics"]["total_tool_calls"] == 4  # 2 traced ops per task (effective calls), not 0

    refused = run("export-run", "gta", run_id, str(tmp_path / "gta"))
    assert refused.exit_code != 0 and "agentic-mme format, not gta" in refused.output
    assert "chainmark export-run agentic-mme" in refused.output and not (tmp_path / "gta").exists()
