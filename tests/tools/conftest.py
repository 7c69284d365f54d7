"""Shared helpers for the tool tests: images drawn on the spot, and a scripted HTTP server on
127.0.0.1 that speaks just enough Serper and OpenAI chat-completions for the service tools."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image


def png(arr_or_image: Any) -> bytes:
    """PNG bytes of a Pillow image, or of a numpy array in OpenCV's BGR order."""
    if isinstance(arr_or_image, Image.Image):
        buf = io.BytesIO()
        arr_or_image.save(buf, "PNG")
        return buf.getvalue()
    ok, buf = cv2.imencode(".png", arr_or_image)
    assert ok
    return buf.tobytes()


def rgb(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def quadrants(width: int = 200, height: int = 100) -> np.ndarray:
    """RGB image whose four quadrants are red, green, blue, white (top-left, top-right, bottom-left, bottom-right)."""
    img = np.zeros((height, width, 3), np.uint8)
    h2, w2 = height // 2, width // 2
    img[:h2, :w2] = (255, 0, 0)
    img[:h2, w2:] = (0, 255, 0)
    img[h2:, :w2] = (0, 0, 255)
    img[h2:, w2:] = (255, 255, 255)
    return img


@dataclass
class ScriptedServer:
    """Requests seen, and replies to give: ``chat_replies`` are popped in order."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    chat_replies: list[str] = field(default_factory=list)
    search_payload: dict[str, Any] = field(default_factory=dict)


SEARCH_PAYLOAD = {
    "searchParameters": {"q": "fish oil softgels", "type": "search"},
    "answerBox": {"title": "Nature Made Fish Oil", "snippet": "1200 mg, 290 softgels per bottle"},
    "organic": [
        {
            "title": "Fish Oil 1200 mg",
            "link": "https://example.org/a",
            "snippet": "290 softgels",
            "position": 1,
            "sitelinks": [{"title": "ignored"}],
        },
        {"title": "Omega-3 guide", "link": "https://example.org/b", "snippet": "How much per day", "position": 2},
    ],
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    state = ScriptedServer(search_payload=SEARCH_PAYLOAD)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            state.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers)})
            if self.path.startswith("/page"):
                self._reply(
                    200,
                    b"<html><head><script>var x=1;</script><title>t</title></head><body>"
                    b"<h1>Fish oil</h1><p>Take one softgel&nbsp;daily.</p></body></html>",
                    "text/html",
                )
            else:
                self._reply(404, b"{}")

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            state.requests.append({"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body})
            if self.path in ("/search", "/lens"):
                if self.headers.get("X-API-KEY") != "test-serper-key":
                    self._reply(403, b'{"message": "bad key"}')
                    return
                self._reply(200, json.dumps(state.search_payload).encode())
            elif self.path.endswith("/chat/completions"):
                content = state.chat_replies.pop(0) if state.chat_replies else ""
                self._reply(
                    200,
                    json.dumps(
                        {
                            "id": "cmpl-1",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model", "m"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content},
                                }
                            ],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        }
                    ).encode(),
                )
            else:
                self._reply(404, b"{}")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
