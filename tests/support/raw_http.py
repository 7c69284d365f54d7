"""A one-thread HTTP/1.1 endpoint on 127.0.0.1 that keeps each request's raw bytes and answers with
raw bytes, for what the scripted server cannot do: show the exact body and headers a client wrote,
drop a connection without answering, cut a body short, or answer something that is not HTTP."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class RawRequest:
    request_line: str
    headers: dict[str, str]  # names lower-cased
    body: bytes


def completion(content: str = "ok") -> bytes:
    """A 200 answer carrying a one-choice chat completion."""
    body = json.dumps(
        {
            "id": "raw",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
    return head % len(body) + body


class RawHTTP:
    """Answers every request with ``answer`` (empty: close without a word), one connection each."""

    def __init__(self, answer: bytes = b""):
        self.answer = answer
        self.requests: list[RawRequest] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self._thread = threading.Thread(target=self._serve, name="raw-http", daemon=True)

    def __enter__(self) -> "RawHTTP":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not, on Linux)
        except OSError:
            pass
        self._sock.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
                length = int(headers.get("content-length", "0"))
                while len(body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                self.requests.append(RawRequest(lines[0], headers, body))
                if self.answer:
                    conn.sendall(self.answer)
