"""Bytes sent to the model are counted per trajectory and per run (as the server received them), and
the replay cache names images (and the tool list) by sha256 instead of holding them in every row, so
rows stay small and a replay still hits every call."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from click.testing import CliRunner
from sqlmodel import func, select

from evaluation.harness import RetryPolicy, RunSpec, start_run
from evaluation.harness.client import canonical_request
from store import session_scope
from store.models import Asset, ReplayCache, Trajectory
from tests.support.scripted_openai import ScriptedOpenAI, error, text, tool_calls
from tui.cli import cli


def usage_of(engine, run_id):  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        return s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).one().usage


def test_sent_bytes_match_what_the_server_received_retries_included(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme")
    scripted_openai.push(
        tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 1000]})),
        error(503, "busy"),
        tool_calls(("rotate", {"image_index": 1, "angle": 90})),
        text("<answer>red</answer>"),
    )
    spec = RunSpec("mme", endpoint, "atomic", concurrency=1, retry=RetryPolicy(attempts=3, base_delay=0.01))
    progress = start_run(engine, blobs, spec)
    assert (progress.done, progress.failed) == (1, 0)
    usage = usage_of(engine, progress.run_id)
    received = scripted_openai.chat_requests()
    assert len(received) == 4 and usage["api_calls"] == 3 and usage["retries"] == 1
    assert usage["sent_bytes"] == sum(r.size for r in received) > 0
    # every image data URL in every request, the one resent after the 503 included
    assert usage["sent_image_bytes"] == sum(len(u) for r in received for u in r.images())
    assert [len(r.images()) for r in received] == [1, 2, 2, 3]  # the history (as the reference sends it)


def test_runs_show_reports_the_run_totals(
    engine, blobs, db_path: Path, make_bench, endpoint, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme", n=2)
    scripted_openai.handler = lambda req: text("<answer>red</answer>")
    progress = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic"))
    total = sum(r.size for r in scripted_openai.chat_requests())
    images = sum(len(u) for r in scripted_openai.chat_requests() for u in r.images())
    shown = CliRunner().invoke(cli, ["--db", str(db_path), "runs", "show", str(progress.run_id), "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert (data["sent_bytes"], data["sent_image_bytes"]) == (total, images) and images > 0
    assert data["sent_bytes_per_trajectory"] == round(total / 2)
    plain = CliRunner().invoke(cli, ["--db", str(db_path), "runs", "show", str(progress.run_id)])
    assert "sent to the model" in plain.output and "per trajectory" in plain.output


def test_cache_rows_name_images_by_sha256_and_a_replay_hits_every_call(
    engine, blobs, make_bench, endpoint, scripted_openai: ScriptedOpenAI
) -> None:
    make_bench("mme")
    scripted_openai.push(
        tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 1000]})),
        tool_calls(("rotate", {"image_index": 1, "angle": 90})),
        text("<answer>red</answer>"),
    )
    first = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", concurrency=1))
    sent = scripted_openai.chat_requests()
    with session_scope(engine) as s:
        rows = s.exec(select(ReplayCache).where(ReplayCache.kind == "model")).all()
        stored = {a.sha256 for a in s.exec(select(Asset)).all()}
        assets_before = s.exec(select(func.count()).select_from(Asset)).one()
    assert len(rows) == 3
    for row, request in zip(sorted(rows, key=lambda r: r.id or 0), sent):
        kept = row.request or {}
        text_of_row = json.dumps(kept)
        assert "data:image" not in text_of_row and "base64" not in text_of_row
        named = [
            p["image_url"]["url"]
            for m in kept["messages"]
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "image_url"
        ]
        # the same images, in the same places, each named by the sha256 of the bytes that were sent
        sent_digests = [
            "sha256:" + hashlib.sha256(base64.b64decode(u.split(",", 1)[1])).hexdigest() for u in request.images()
        ]
        assert named == sent_digests
        assert {d.removeprefix("sha256:") for d in named} <= stored  # each image kept once, as an asset
    # the tool list, the same in every call, is kept once (by its sha256) instead of in every row
    with session_scope(engine) as s:
        tool_rows = s.exec(select(ReplayCache).where(ReplayCache.kind == "tools")).all()
    assert len(tool_rows) == 1 and tool_rows[0].response == {"tools": sent[0].json["tools"]}
    assert {(r.request or {})["tools"] for r in rows} == {"sha256:" + tool_rows[0].key}
    assert tool_rows[0].key == hashlib.sha256(canonical_request(sent[0].json["tools"]).encode()).hexdigest()
    # so a row grows with the text of the conversation only (images are 71-byte names)
    assert max(len(json.dumps(r.request)) for r in rows) < 4_000 < len(json.dumps(sent[0].json["tools"]))

    replay = start_run(engine, blobs, RunSpec("mme", endpoint, "atomic", replay=True))
    assert len(scripted_openai.chat_requests()) == len(sent)  # nothing went over the network
    usage = usage_of(engine, replay.run_id)
    assert usage["replayed_calls"] == 3 and usage["sent_bytes"] == 0
    with session_scope(engine) as s:
        # the replay produced the same images (bit for bit): no new asset rows
        assert s.exec(select(func.count()).select_from(Asset)).one() == assets_before
        assert first.run_id != replay.run_id
