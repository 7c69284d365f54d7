"""Code mode end to end, the AST tracer, and the sandbox against hostile code."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from sqlmodel import select, col

from evaluation.harness import RunSpec, start_run
from evaluation.harness.ast_trace import trace_ops
from evaluation.harness.sandbox import SandboxLimits, run_python
from store import session_scope
from store.models import Asset, Event, Trajectory
from tests.support.scripted_openai import text
from tests.support.must import must

CROP_CODE = """<think>crop the left half</think><code>
import os
from PIL import Image
img = Image.open(os.environ['ORIGINAL_IMAGE_PATH'])
img.crop((0, 0, 50, 80)).save(os.path.join(os.environ['PROCESSED_IMAGE_SAVE_PATH'], 'transformed_image_1.png'))
print(img.size)
</code>"""


def test_code_mode_runs_code_traces_ops_and_shows_images(engine, blobs, make_bench, endpoint, scripted_openai):
    make_bench("mme")
    scripted_openai.push(text(CROP_CODE), text("let me think more"), text("<answer>red</answer>"))
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "code"))
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).one()
        evs = s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all()
        execs = [e for e in evs if e.kind == "code_exec"]
        assert len(execs) == 1 and not execs[0].failed
        p = execs[0].payload
        assert p["exit_code"] == 0 and p["stdout"].strip() == "(100, 80)"
        assert [(o["op"], o["save"]) for o in p["ops"]] == [("crop", "transformed_image_1.png")]
        assert p["files"] == ["tool_images/transformed_image_1.png"] and len(p["asset_ids"]) == 1
        asset = s.get(Asset, p["asset_ids"][0])
        assert (must(asset).width, must(asset).height) == (50, 80)
        assert any(e.kind == "error" and e.payload["type"] == "format" for e in evs)
        assert traj.final_answer == "red" and traj.usage["code_ops"] == 1 and traj.usage["effective_tool_calls"] == 1
    second = scripted_openai.chat_requests()[1]
    assert len(second.images()) == 2 and "Exit code: 0" in str(second.json["messages"][-1]["content"])
    # image ops are code now; only the search tools stay native function calls
    assert {t["function"]["name"] for t in second.json["tools"]} == {
        "google_search",
        "google_lens_search",
        "fetch_webpage",
    }
    first_system = scripted_openai.chat_requests()[0].json["messages"][0]["content"]
    assert "PROCESSED_IMAGE_SAVE_PATH" in first_system


def test_ast_tracer_rules():
    code = """
import cv2
from PIL import Image, ImageEnhance
img = Image.open('orig.png')
c = img.crop((0, 0, 10, 10)).resize((20, 20))
c.save('transformed_image_1.png')
for i in range(3):
    img.rotate(90 * i).save(f'transformed_image_{i + 2}.png')
ImageEnhance.Contrast(img).enhance(2.0).save('transformed_image_5.png')
a = cv2.imread('orig.png')
cv2.imwrite('transformed_image_6.png', cv2.flip(cv2.resize(a, (5, 5)), 1))
b = a[0:5, 0:5]
img.transpose(Image.FLIP_LEFT_RIGHT)
"""
    ops = [(o["op"], o["save"]) for o in trace_ops(code)]
    assert ops == [
        ("crop", "transformed_image_1.png"),  # resize after a crop is not counted (reference rule)
        *[("rotate", "transformed_image_{i + 2}.png")] * 3,
        ("enhance", "transformed_image_5.png"),
        ("resize", "transformed_image_6.png"),
        ("flip", "transformed_image_6.png"),
        ("flip", None),
    ]  # numpy slicing is not an op
    assert trace_ops("def (:") == []
    # hostile nesting must not crash the harness that parses it (the sandbox runs it, not the tracer)
    assert trace_ops("x = " + "-" * 200_000 + "1") == [] and trace_ops("x = " + "[" * 5000 + "]" * 5000) == []
    assert trace_ops("\0") == []


def _run(code: str, tmp_path: Path, **limits) -> tuple:
    work = tmp_path / "work"
    (work / "tool_images").mkdir(parents=True)
    result = asyncio.run(
        run_python(
            code,
            work,
            save_dir=work / "tool_images",
            limits=SandboxLimits(**{"cpu_seconds": 2, "wall_seconds": 8, **limits}),
        )
    )
    return result, work


@pytest.mark.parametrize(
    "code, reason",
    [
        ("import socket\ns = socket.socket()\ns.connect(('1.1.1.1', 80))", "blocked: network access"),
        ("import urllib.request\nurllib.request.urlopen('http://127.0.0.1:1')", "blocked: network access"),
        ("print(open('/etc/passwd').read())", "blocked: file access outside"),
        ("import os\nprint(os.listdir('/'))", "blocked: file access outside"),
        ("import os\nwhile True:\n    os.fork()", "blocked: forking"),
        ("import subprocess\nsubprocess.run(['sh', '-c', ':(){ :|:& };:'])", "blocked: starting programs"),
        ("import os\nos.system('echo hi')", "blocked: starting programs"),
        ("import ctypes\nctypes.CDLL(None).fork()", "blocked:"),
    ],
)
def test_sandbox_refuses_and_records(code, reason, tmp_path):
    result, _ = _run(code, tmp_path)
    assert result.exit_code != 0 and result.killed_reason and result.killed_reason.startswith(reason), result


def test_sandbox_stops_memory_bombs_loops_sleepers_and_floods(tmp_path):
    mem, _ = _run("a = []\nwhile True:\n    a.append(bytearray(50 * 1024 * 1024))", tmp_path / "m", memory_mb=400)
    assert mem.killed_reason == "memory"
    loop, _ = _run("while True:\n    pass", tmp_path / "l", cpu_seconds=1)
    assert loop.killed_reason == "cpu_time" and loop.duration_s < 5
    sleeper, _ = _run("import time\ntime.sleep(60)", tmp_path / "s", wall_seconds=1)
    assert sleeper.timed_out and sleeper.killed_reason == "wall_time"
    flood, _ = _run("while True:\n    print('x' * 4096)", tmp_path / "f", output_bytes=1000)
    assert flood.killed_reason in ("output_flood", "cpu_time") and len(flood.stdout) <= 1000 and flood.stdout_truncated


def test_saves_outside_are_redirected_and_the_host_is_unharmed(tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("intact")
    code = (
        f"from PIL import Image\nImage.new('RGB', (3, 3)).save({str(tmp_path / 'evil.png')!r})\n"
        f"open({str(canary)!r}, 'w').write('pwned')"
    )
    result, work = _run(code, tmp_path / "r")
    assert (work / "tool_images" / "evil.png").exists() and not (tmp_path / "evil.png").exists()
    assert "redirected save" in result.stderr and result.killed_reason.startswith("blocked: file access")
    assert canary.read_text() == "intact"
    pid = os.fork()  # the host can still start processes after the fork-bomb tests
    if pid == 0:
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0


def test_hostile_code_in_code_mode_is_recorded_and_the_run_goes_on(
    engine, blobs, make_bench, endpoint, scripted_openai
):
    make_bench("mme")
    scripted_openai.push(
        text("<code>\nimport os\nwhile True:\n    os.fork()\n</code>"),
        text("<code>\nprint(open('/etc/shadow').read())\n</code>"),
        text("<answer>red</answer>"),
    )
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "code"))
    with session_scope(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).one()
        execs = s.exec(
            select(Event).where(Event.trajectory_id == traj.id, Event.kind == "code_exec").order_by(col(Event.ordinal))
        ).all()
        assert [e.failed for e in execs] == [True, True]
        assert [e.payload["killed_reason"].split(" (")[0] for e in execs] == [
            "blocked: forking",
            "blocked: file access outside the sandbox folder",
        ]
        assert traj.status == "done" and traj.final_answer == "red"


@pytest.mark.parametrize("slots", [1, 2])
def test_sandboxes_run_at_most_the_slot_count_at_once_whatever_the_concurrency(tmp_path, monkeypatch, slots):
    """Six sandboxes asked for at once (as -j 6 would) run at most ``sandbox_slots`` at a time: each
    reports when its code started and ended, and no more intervals than slots ever overlap."""
    monkeypatch.setenv("CHAINMARK_SANDBOX_SLOTS", str(slots))
    code = "import time\nt = time.time()\ntime.sleep(0.3)\nprint(t, time.time())\n"

    async def one(i: int):  # type: ignore[no-untyped-def]
        work = tmp_path / f"w{i}"
        work.mkdir()
        return await run_python(code, work, save_dir=work)

    async def all_at_once():  # type: ignore[no-untyped-def]
        return await asyncio.gather(*(one(i) for i in range(6)))

    results = asyncio.run(all_at_once())
    spans = [tuple(map(float, r.stdout.split())) for r in results]
    assert len(spans) == 6 and all(r.exit_code == 0 for r in results)
    most = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    assert most <= slots


def test_without_a_setting_the_sandbox_cap_is_the_cpu_count_not_the_concurrency(tmp_path, monkeypatch):
    """No ``sandbox_slots`` setting: the cap is the CPUs this process may use (1 here), so six
    sandboxes asked for at once (as -j 6 would) still run one at a time; the setting overrides it."""
    from evaluation.harness.sandbox import sandbox_slots

    monkeypatch.delenv("CHAINMARK_SANDBOX_SLOTS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert sandbox_slots() == 3
    monkeypatch.setenv("CHAINMARK_SANDBOX_SLOTS", "5")
    assert sandbox_slots() == 5
    monkeypatch.delenv("CHAINMARK_SANDBOX_SLOTS")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    code = "import time\nt = time.time()\ntime.sleep(0.2)\nprint(t, time.time())\n"

    async def one(i: int):  # type: ignore[no-untyped-def]
        work = tmp_path / f"w{i}"
        work.mkdir()
        return await run_python(code, work, save_dir=work)

    async def all_at_once():  # type: ignore[no-untyped-def]
        return await asyncio.gather(*(one(i) for i in range(6)))

    results = asyncio.run(all_at_once())
    spans = [tuple(map(float, r.stdout.split())) for r in results]
    assert len(spans) == 6 and all(r.exit_code == 0 for r in results)
    assert max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans) == 1
