"""Service tools against a scripted server on 127.0.0.1: record, replay offline byte-identically,
keys kept out of the cache, and a clear error when there is neither a backend nor a recording."""

from __future__ import annotations

import json

import pytest
from sqlmodel import select

from evaluation.tools import ToolContext, ToolSettings, execute
from evaluation.tools.replay import request_key
from store.models import ReplayCache
from tests.tools.conftest import ScriptedServer, png, quadrants
from tests.support.must import must

KEY_ENV = "CHAINMARK_TEST_SERPER_KEY"


@pytest.fixture
def search_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, "test-serper-key")
    return "test-serper-key"


def settings(server: ScriptedServer | None = None, **extra) -> ToolSettings:  # type: ignore[no-untyped-def]
    s = ToolSettings(search_api_key_env=KEY_ENV, vlm_api_key_env="CHAINMARK_TEST_VLM_KEY", **extra)
    if server is not None:
        s.search_base_url = server.url
    return s


def test_search_records_then_replays_offline_byte_identically(
    session,
    server,
    search_key,  # type: ignore[no-untyped-def]
    monkeypatch,
) -> None:
    live = execute(
        "agentic-mme",
        "google_search",
        {"query": "fish oil softgels"},
        ToolContext(session=session, settings=settings(server)),
    )
    assert live.ok and not live.replayed, live.error
    assert live.data["context"].startswith("Answer box: Nature Made Fish Oil | 1200 mg, 290 softgels per bottle")
    assert live.data["raw"]["organic"][0] == {
        "title": "Fish Oil 1200 mg",
        "link": "https://example.org/a",
        "snippet": "290 softgels",
        "position": 1,
    }
    sent = server.requests[-1]
    assert sent["body"] == {"q": "fish oil softgels", "gl": "us", "hl": "en", "page": 1}
    assert sent["headers"]["X-API-KEY"] == search_key

    rows = session.exec(select(ReplayCache)).all()
    assert len(rows) == 1 and rows[0].kind == "search"
    assert search_key not in json.dumps(rows[0].request) + json.dumps(rows[0].response)
    assert server.url not in json.dumps(rows[0].request)

    # Offline: no key, a dead base URL, replay-only mode → the same bytes come back from the cache.
    monkeypatch.delenv(KEY_ENV)
    n_requests = len(server.requests)
    offline = settings(replay_only=True)
    offline.search_base_url = "http://127.0.0.1:9"
    replayed = execute(
        "agentic-mme", "google_search", {"query": "fish oil softgels"}, ToolContext(session=session, settings=offline)
    )
    assert replayed.ok and replayed.replayed
    assert replayed.text.encode() == live.text.encode()
    assert json.dumps(replayed.data, sort_keys=True) == json.dumps(live.data, sort_keys=True)
    assert len(server.requests) == n_requests


def test_missing_backend_names_the_setting(session) -> None:  # type: ignore[no-untyped-def]
    r = execute("gta", "GoogleSearch", {"query": "never recorded"}, ToolContext(session=session, settings=settings()))
    assert not r.ok and r.error == (
        "GoogleSearch: no backend configured and no recorded response: set the "
        f"{KEY_ENV} environment variable to a Serper API key"
    )
    ctx = ToolContext(files={"a.png": png(quadrants())}, session=session, settings=settings())
    r = execute("gta", "ImageDescription", {"image": "a.png"}, ctx)
    assert not r.ok and "set CHAINMARK_VLM_BASE_URL and CHAINMARK_VLM_MODEL" in r.error
    r = execute("gta", "TextToImage", {"keywords": "a red fox"}, ctx)
    assert not r.ok and "set CHAINMARK_IMAGE_BASE_URL and CHAINMARK_IMAGE_MODEL" in r.error
    r = execute(
        "agentic-mme",
        "fetch_webpage",
        {"url": "https://example.org/"},
        ToolContext(session=session, settings=settings(replay_only=True)),
    )
    assert not r.ok and "replay-only mode is on (CHAINMARK_REPLAY_ONLY)" in r.error
    assert session.exec(select(ReplayCache)).all() == []


def test_wrong_key_is_a_clear_error_and_nothing_is_recorded(session, server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_ENV, "wrong")
    r = execute("gta", "GoogleSearch", {"query": "q"}, ToolContext(session=session, settings=settings(server)))
    assert not r.ok and must(r.error).startswith("search service answered HTTP 403")
    assert session.exec(select(ReplayCache)).all() == []


def test_gta_search_formats_the_first_k_results(server, search_key) -> None:  # type: ignore[no-untyped-def]
    r = execute("gta", "GoogleSearch", {"query": "fish oil", "k": 1}, ToolContext(settings=settings(server)))
    assert r.ok and r.text == (
        "Answer: 1200 mg, 290 softgels per bottle\n1 - Fish Oil 1200 mg: 290 softgels (https://example.org/a)"
    )
    assert server.requests[-1]["body"] == {"q": "fish oil", "num": 1}


def test_vlm_tools_call_the_endpoint_and_replay(session, server) -> None:  # type: ignore[no-untyped-def]
    vlm = settings(vlm_base_url=server.url + "/v1", vlm_model="scripted-vlm")
    ctx = ToolContext(files={"cups.png": png(quadrants())}, session=session, settings=vlm)
    server.chat_replies = [
        "There are 3 cups.",
        '[{"bbox": [10, 20, 110, 90], "score": 0.9}, {"bbox": [120, 5, 190, 60], "score": 0.95}]',
    ]
    count = execute("gta", "CountGivenObject", {"image": "cups.png", "text": "cup"}, ctx)
    assert count.ok and count.text == "3" and count.data["count"] == 3
    sent = server.requests[-1]["body"]
    assert sent["model"] == "scripted-vlm" and sent["temperature"] == 0
    parts = sent["messages"][0]["content"]
    assert parts[0]["text"].startswith("How many cup are in this image?")
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    boxes = execute("gta", "TextToBbox", {"image": "cups.png", "text": "cup"}, ctx)
    assert boxes.ok and boxes.text == "(120, 5, 190, 60), score 0.95"

    n = len(server.requests)
    # Endpoint gone (the model name stays: it is part of the request key): answers come from the cache.
    ctx.settings = settings(replay_only=True, vlm_model="scripted-vlm")
    assert execute("gta", "CountGivenObject", {"image": "cups.png", "text": "cup"}, ctx).text == "3"
    again = execute("gta", "TextToBbox", {"image": "cups.png", "text": "cup", "top1": False}, ctx)
    assert again.replayed and again.text.splitlines() == [
        "(120, 5, 190, 60), score 0.95",
        "(10, 20, 110, 90), score 0.90",
    ]
    assert len(server.requests) == n
    row = session.exec(select(ReplayCache).where(ReplayCache.kind == "vlm")).first()
    assert "base64" not in json.dumps(row.request) and len(row.request["image_sha256"][0]) == 64


def test_fetch_webpage_extracts_text_and_replays(session, server) -> None:  # type: ignore[no-untyped-def]
    ctx = ToolContext(session=session, settings=settings())
    r = execute("agentic-mme", "fetch_webpage", {"url": server.url + "/page", "max_chars": 30}, ctx)
    assert r.ok and r.text == "Fish oil\n\nTake one softgel\xa0daily."[:30]
    assert "var x" not in r.text
    ctx.settings = settings(replay_only=True)
    full = execute("agentic-mme", "fetch_webpage", {"url": server.url + "/page"}, ctx)
    assert full.replayed and full.text.endswith("Take one softgel\xa0daily.")


def test_lens_uses_the_image_hash_as_its_key(session, server, search_key) -> None:  # type: ignore[no-untyped-def]
    image = png(quadrants())
    ctx = ToolContext(images=[image], session=session, settings=settings(server))
    r = execute("agentic-mme", "google_lens_search", {"image_ref": "original"}, ctx)
    assert not r.ok and "IMGBB_API_KEY" in r.error  # a local image must be uploaded first
    import hashlib

    from evaluation.tools.replay import record

    request = {"endpoint": "lens", "image_sha256": hashlib.sha256(image).hexdigest()}
    record(ctx, "search", request, {"visual_matches": [{"title": "Quadrants", "link": "https://example.org/q"}]})
    r = execute("agentic-mme", "google_lens_search", {"image_ref": "current"}, ctx)
    assert r.ok and r.replayed and r.text == "[1] Quadrants\nhttps://example.org/q" and r.data["num"] == 1
    assert len(request_key("search", request)) == 64
