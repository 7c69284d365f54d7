"""Revocation bites (issue 31 item 7): `annotators token NAME --revoke` ends NAME's open session of a
running `chainmark serve --accounts` (a real process on a free loopback port) within 5 s and lets no
new one in; issuing, revoking and `set-role` each leave an audit row (never the token or its hash)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from sqlmodel import col, select

from store import make_engine, session_scope
from store.models import AuditEvent
from tests.support.template_db import copy_sqlite_template

SESSION_TIMEOUT = 60  # seconds for the TUI's first output or the server to listen; reached only on failure
REVOKED_WITHIN_S = 5.0


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from tui.cli import main; main()", "--db", str(db), "--as", "admin-al", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def account_db(tmp_path: Path) -> tuple[Path, str]:
    """A database with annotator cy holding a serve token; the token."""
    db = tmp_path / "c.db"
    copy_sqlite_template(db)
    cli(db, "annotators", "add", "cy")
    token = cli(db, "annotators", "token", "cy", "--json").stdout
    import json

    return db, json.loads(token)["token"]


@pytest.fixture
def serving(account_db: tuple[Path, str], tmp_path: Path) -> Iterator[int]:
    """`chainmark serve --accounts` on a free loopback port, stopped (and waited for) after the test."""
    db, _ = account_db
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from tui.cli import main; main()", "--db", str(db), "serve", "--accounts"]
        + ["--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "serve.err").open("w"),
        env={**os.environ, "TERM": "xterm-256color"},
    )
    try:
        deadline = time.monotonic() + SESSION_TIMEOUT
        while not listening(port):
            assert proc.poll() is None, (tmp_path / "serve.err").read_text()
            assert time.monotonic() < deadline, "serve did not start listening"
            time.sleep(0.05)
        yield port
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _session_ends_after_revoke(db: Path, port: int, token: str) -> float | None:
    """Open cy's session, see the TUI's first output, revoke; seconds from the revoke's end to the close."""
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    async with aiohttp.ClientSession() as http:
        page = await http.get(f"http://127.0.0.1:{port}/?token={token}")
        assert page.status == 200
        ended = None
        revoked: float | None = None
        # the server closes the socket: the client's own closing handshake, or a receive that was waiting
        # when it closed, may find the transport gone (the session ended then)
        try:
            async with http.ws_connect(f"http://127.0.0.1:{port}/ws/{token}?width=100&height=30", headers=origin) as ws:
                while True:  # the session is up once the TUI has drawn something
                    msg = await asyncio.wait_for(ws.receive(), SESSION_TIMEOUT)
                    assert msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), msg
                    if msg.type == aiohttp.WSMsgType.BINARY and msg.data:
                        break
                await asyncio.to_thread(cli, db, "annotators", "token", "cy", "--revoke")
                revoked = time.monotonic()
                while True:
                    msg = await asyncio.wait_for(ws.receive(), SESSION_TIMEOUT)
                    if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
                        ended = time.monotonic() - revoked
                        break
        except aiohttp.ClientConnectionResetError:
            if ended is None and revoked is not None:
                ended = time.monotonic() - revoked
        assert ended is not None
        again = await http.get(f"http://127.0.0.1:{port}/?token={token}")
        assert again.status == 403
    return ended


def test_revoking_a_token_ends_the_open_serve_session_within_5_s(account_db, serving: int) -> None:
    db, token = account_db
    ended = asyncio.run(_session_ends_after_revoke(db, serving, token))
    assert ended is not None and ended <= REVOKED_WITHIN_S, f"the session stayed open {ended} s after the revoke"


def test_token_issue_revoke_and_set_role_write_audit_rows(account_db) -> None:
    db, token = account_db
    cli(db, "annotators", "set-role", "cy", "reviewer")
    cli(db, "annotators", "token", "cy")  # replaces the first
    cli(db, "annotators", "token", "cy", "--revoke")
    engine = make_engine(db)
    with session_scope(engine) as s:
        rows = s.exec(select(AuditEvent).where(AuditEvent.entity == "annotator").order_by(col(AuditEvent.id))).all()
        trail = [(r.actor, r.before, r.after) for r in rows]
    engine.dispose()
    assert trail == [
        ("admin-al", {"name": "cy", "serve_login": "none"}, {"name": "cy", "serve_login": "issued"}),
        ("admin-al", {"name": "cy", "role": "annotator"}, {"name": "cy", "role": "reviewer"}),
        ("admin-al", {"name": "cy", "serve_login": "set"}, {"name": "cy", "serve_login": "replaced"}),
        ("admin-al", {"name": "cy", "serve_login": "set"}, {"name": "cy", "serve_login": "revoked"}),
    ]
    assert token not in repr(trail)
