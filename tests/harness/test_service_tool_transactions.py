"""Service tools (ImageDescription, search, …) hold no database transaction across their network
call: many are in flight at once, none fails with "database is locked", and a database that stays
locked is never shown to the model as a tool result."""

from __future__ import annotations

import base64
import io
import json
import re
import sqlite3

import pytest
from PIL import Image
from sqlalchemy import event
from sqlmodel import select

from annotation import tasks as authoring
from evaluation.harness import RunSpec, start_run
from evaluation.tools import ToolContext, ToolSettings, execute
from evaluation.tools.images import ImageData
from store import session_scope
from store.models import Event, ReplayCache, Trajectory
from tests.support.scripted_openai import Request, ScriptedOpenAI, text, tool_calls
from tests.support.must import must

COLOURS = {
    "red": (220, 20, 20),
    "green": (20, 200, 20),
    "blue": (20, 20, 220),
    "yellow": (230, 230, 20),
    "white": (255, 255, 255),
    "black": (0, 0, 0),
    "grey": (128, 128, 128),
    "cyan": (20, 220, 220),
    "magenta": (220, 20, 220),
    "orange": (250, 150, 10),
}


def solid_png(rgb: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), rgb).save(buf, "PNG")
    return buf.getvalue()


def colour_of(request: Request) -> str:
    """What the fake VLM 'sees': the name of the image's colour."""
    url = request.images()[0]
    pixel = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB").getpixel((5, 5))
    return min(COLOURS, key=lambda n: sum((a - b) ** 2 for a, b in zip(COLOURS[n], pixel)))


def model_turn(request: Request):
    """Ask for a description first, then answer with what the tool said."""
    tool_msgs = [m for m in request.messages if m["role"] == "tool"]
    if not tool_msgs:
        return tool_calls(("ImageDescription", {"image": "0"}))
    said = json.loads(tool_msgs[-1]["content"])
    words = re.findall(r"[a-z]+", json.dumps(said))
    return text(f"<answer>{next(w for w in words if w in COLOURS) if said.get('ok', True) else 'ERROR'}</answer>")


@pytest.fixture
def vlm(monkeypatch):
    with ScriptedOpenAI(handler=lambda req: text(f"A plain {colour_of(req)} rectangle.", delay=1.0)) as server:
        monkeypatch.setenv("CHAINMARK_VLM_BASE_URL", server.base_url)
        monkeypatch.setenv("CHAINMARK_VLM_MODEL", "scripted-vlm")
        yield server


def make_gta_tasks(engine, blobs, names: list[str]) -> dict[int, str]:
    expected = {}
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta-svc", "chainmark", tool_set="gta")
        for i, name in enumerate(names):
            t = authoring.create_task(
                s, "gta-svc", f"What colour is the image? ({i})", answer_spec={"kind": "contains", "value": name}
            )
            authoring.attach_asset(s, blobs, must(t.id), solid_png(COLOURS[name]), original_path=f"image/image_{i}.png")
            expected[t.id] = name
    return expected


def test_concurrent_service_calls_are_in_flight_at_once_and_never_locked(engine, blobs, endpoint, scripted_openai, vlm):
    names = list(COLOURS)  # 10 tasks, 10 different images, so 10 different cache keys
    expected = make_gta_tasks(engine, blobs, names)
    scripted_openai.handler = model_turn
    progress = start_run(engine, blobs, RunSpec("gta-svc", endpoint, "atomic", concurrency=len(names)))

    if progress.failed:  # say why, not just how many
        with session_scope(engine) as s:
            errors = [t.error for t in s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id))]
        raise AssertionError(f"{progress.failed} failed: {[e for e in errors if e]}")
    assert progress.done == len(names)
    assert len(vlm.chat_requests()) == len(names)
    assert vlm.max_in_flight > 1, "service calls were serialised"
    with session_scope(engine) as s:
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).all()
        assert {t.task_id: (t.status, t.final_answer) for t in trajs} == {i: ("done", n) for i, n in expected.items()}
        payloads = json.dumps([e.payload for e in s.exec(select(Event)).all()])
        assert "locked" not in payloads
        results = [e.payload for e in s.exec(select(Event).where(Event.kind == "tool_result")).all()]
        assert len(results) == len(names) and all(r["ok"] for r in results)
        cached = s.exec(select(ReplayCache).where(ReplayCache.kind == "vlm")).all()
        assert sorted(r.response["content"].split()[2] for r in cached) == sorted(names)


def test_a_locked_database_is_raised_not_returned_as_a_tool_result(engine, blobs, db_path, vlm, monkeypatch):
    """A writer that never lets go: the recorded answer cannot be written, and the caller gets
    StoreBusy (the trajectory fails) instead of a tool result saying "database is locked"."""
    import evaluation.tools.replay as replay
    from evaluation.tools.result import StoreBusy

    monkeypatch.setattr(replay, "BUSY_BACKOFF_S", 0.0)

    @event.listens_for(engine, "connect")
    def short_timeout(dbapi_conn, _rec):  # so the test does not wait 4 × 30 s
        dbapi_conn.execute("PRAGMA busy_timeout=50")

    engine.dispose()
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        ctx = ToolContext(
            images=[solid_png(COLOURS["red"])],
            engine=engine,
            blobs=blobs,
            settings=ToolSettings.from_env(),
            allow_paths=False,
        )
        with pytest.raises(StoreBusy):
            execute("gta", "ImageDescription", {"image": "0"}, ctx)
        assert len(vlm.chat_requests()) == 1  # the call itself happened, outside any transaction
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # once the lock is gone the same call works and is recorded
    result = execute("gta", "ImageDescription", {"image": "0"}, ctx)
    assert result.ok and "red" in result.text
    with session_scope(engine) as s:
        assert len(s.exec(select(ReplayCache)).all()) == 1


def _writer_can_start(db_path) -> bool:
    """Can another process's writer take SQLite's write lock right now (no waiting)?"""
    other = sqlite3.connect(db_path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


def test_the_database_is_writable_while_a_service_call_is_in_flight(engine, blobs, db_path, monkeypatch, tmp_path):
    """Checked from inside the VLM server at the moment each request arrives: the harness's and the
    ``tools run`` command's service calls leave the database free for other writers."""
    from click.testing import CliRunner

    from tui.cli import cli

    seen: list[bool] = []

    def vlm_turn(req):  # type: ignore[no-untyped-def]
        seen.append(_writer_can_start(db_path))
        return text(f"A plain {colour_of(req)} rectangle.", delay=0.2)

    with ScriptedOpenAI(handler=vlm_turn) as vlm:
        monkeypatch.setenv("CHAINMARK_VLM_BASE_URL", vlm.base_url)
        monkeypatch.setenv("CHAINMARK_VLM_MODEL", "scripted-vlm")
        ctx = ToolContext(
            images=[solid_png(COLOURS["blue"])],
            engine=engine,
            blobs=blobs,
            settings=ToolSettings.from_env(),
            allow_paths=False,
        )
        assert execute("gta", "ImageDescription", {"image": "0"}, ctx).ok
        image = tmp_path / "green.png"
        image.write_bytes(solid_png(COLOURS["green"]))
        result = CliRunner().invoke(
            cli,
            ["--db", str(db_path), "tools", "run", "ImageDescription", "--image", str(image)],
            catch_exceptions=False,
        )
        assert result.exit_code == 0 and "green" in result.output, result.output
    assert seen == [True, True]


def test_a_runs_service_calls_go_out_on_its_loop_with_the_services_key_alone(
    engine, blobs, scripted_openai, vlm, monkeypatch
):
    """The run's tools post through the run's event loop (``service_http``): the blocking client
    is never built, and the VLM sees its own key, never the model endpoint's."""
    from evaluation.harness import add_endpoint
    from evaluation.modelcall import sync_client

    monkeypatch.setattr(sync_client, "_CLIENTS", {})
    monkeypatch.setenv("CHAINMARK_TEST_MODEL_KEY", "sk-model-secret-1111")
    monkeypatch.setenv("CHAINMARK_VLM_API_KEY", "sk-vlm-secret-2222")
    with session_scope(engine, "tester") as s:
        add_endpoint(s, "keyed", scripted_openai.base_url, "scripted-model", api_key_env="CHAINMARK_TEST_MODEL_KEY")
    names = ["red", "green", "blue"]
    expected = make_gta_tasks(engine, blobs, names)
    scripted_openai.handler = model_turn
    progress = start_run(engine, blobs, RunSpec("gta-svc", "keyed", "atomic", concurrency=3))

    assert (progress.done, progress.failed) == (3, 0)
    with session_scope(engine) as s:
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == progress.run_id)).all()
        assert {t.task_id: t.final_answer for t in trajs} == expected
    assert sync_client._CLIENTS == {}, "a service call went through the blocking client"
    seen = vlm.chat_requests()
    assert len(seen) == 3
    assert {r.headers["authorization"] for r in seen} == {"Bearer sk-vlm-secret-2222"}
    assert {r.headers["authorization"] for r in scripted_openai.chat_requests()} == {"Bearer sk-model-secret-1111"}


def test_png_and_jpeg_go_to_the_vision_model_as_they_are(engine, blobs, vlm):
    """No decode and re-encode for the formats every server takes; any other format is sent as a
    PNG of the same pixels."""
    jpeg, bmp = io.BytesIO(), io.BytesIO()
    Image.new("RGB", (64, 48), COLOURS["orange"]).save(jpeg, "JPEG", quality=90)
    Image.new("RGB", (64, 48), COLOURS["cyan"]).save(bmp, "BMP")
    images: list[ImageData] = [solid_png(COLOURS["green"]), jpeg.getvalue(), bmp.getvalue()]
    ctx = ToolContext(images=images, engine=engine, blobs=blobs, settings=ToolSettings.from_env(), allow_paths=False)
    said = [execute("gta", "ImageDescription", {"image": str(i)}, ctx) for i in range(3)]

    assert [r.ok for r in said] == [True, True, True]
    assert ["green" in said[0].text, "orange" in said[1].text, "cyan" in said[2].text] == [True, True, True]
    urls = [r.images()[0] for r in vlm.chat_requests()]
    assert urls[0] == "data:image/png;base64," + base64.b64encode(solid_png(COLOURS["green"])).decode()
    assert urls[1] == "data:image/jpeg;base64," + base64.b64encode(jpeg.getvalue()).decode()
    assert urls[2].startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(urls[2].split(",", 1)[1])))
    assert sent.format == "PNG" and sent.size == (64, 48) and sent.convert("RGB").getpixel((5, 5)) == COLOURS["cyan"]
