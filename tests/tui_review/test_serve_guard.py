"""`chainmark serve` lets in only its own page's websocket with a valid token (issue 14, item 5): a page on
another origin, or a client without the token, gets 403; the right one gets a TUI session."""

from __future__ import annotations

import asyncio
import shlex

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from tui.commands.serve import serve_command
from tui.context import AppContext
from tui.serve_guard import GuardedServer, Login, allowed_origins, origin_of
from tests.support.must import must

SESSION_TIMEOUT = 60  # seconds to wait for the TUI's first output; reached only when a session fails
SERVED = "SERVED"  # stands for the served origin, http://127.0.0.1:<port>


def guarded(db_path, port: int) -> GuardedServer:
    app = AppContext(db=str(db_path), actor="ann")
    return GuardedServer(
        [
            Login.with_token("ann", "tok-ann-secret", serve_command(app)),
            Login.with_token("bob", "tok-bob-secret", serve_command(app, "bob")),
        ],
        host="127.0.0.1",
        port=port,
    )


async def handshake(db_path, token: str, origin: str | None = SERVED, want_output: bool = False) -> int | bytes:
    """The websocket handshake's status (101 when accepted), or with ``want_output`` the session's first bytes."""
    probe = TestServer(aiohttp.web.Application(), host="127.0.0.1")  # a free port: the origin names it
    await probe.start_server()
    port = probe.port
    await probe.close()
    server = TestServer(await guarded(db_path, must(port))._make_app(), host="127.0.0.1", port=port)
    await server.start_server()
    headers = {} if origin is None else {"Origin": f"http://127.0.0.1:{port}" if origin == SERVED else origin}
    try:
        async with aiohttp.ClientSession() as http:
            try:
                async with http.ws_connect(
                    f"http://127.0.0.1:{port}/ws/{token}?width=100&height=30", headers=headers
                ) as ws:
                    if not want_output:
                        return 101
                    while True:
                        msg = await asyncio.wait_for(ws.receive(), SESSION_TIMEOUT)
                        assert msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), msg
                        if msg.type == aiohttp.WSMsgType.BINARY and msg.data:
                            return msg.data
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status
    finally:
        await server.close()


def test_foreign_origin_is_refused(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    assert asyncio.run(handshake(db_path, "tok-ann-secret", origin="https://evil.example")) == 403


def test_missing_origin_is_refused(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    assert asyncio.run(handshake(db_path, "tok-ann-secret", origin=None)) == 403


@pytest.mark.parametrize("token", ["", "tok-ann-secreT", "nope"])
def test_websocket_without_a_valid_token_is_refused(engine, db_path, token: str) -> None:  # type: ignore[no-untyped-def]
    assert asyncio.run(handshake(db_path, token)) in (403, 404)  # (an empty token matches no route)


def test_the_right_origin_and_token_get_a_tui_session(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    first = asyncio.run(handshake(db_path, "tok-ann-secret", want_output=True))
    assert isinstance(first, bytes) and first


def test_each_user_runs_as_themselves(db_path) -> None:  # type: ignore[no-untyped-def]
    server = guarded(db_path, 8000)
    assert shlex.split(must(server.login_for("tok-bob-secret")).command)[-2:] == ["--as", "bob"]
    assert shlex.split(must(server.login_for("tok-ann-secret")).command)[-2:] == ["--as", "ann"]
    assert server.login_for("tok-ann-secre") is None and server.login_for(None) is None


def test_stored_accounts_log_in_by_their_token_and_only_its_hash_is_kept(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    """Per-user tokens from `chainmark annotators token` (issue 17, serve for a team): the database keeps
    the sha256 only; `serve --accounts` lets each person in as themselves; a new token replaces the old."""
    import json

    from click.testing import CliRunner
    from sqlmodel import select

    from store import session_scope
    from store.models import Annotator
    from tui.cli import cli
    from tui.commands.serve import account_logins

    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--db", str(db_path), "--as", "admin", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    run("annotators", "add", "cy")
    first = json.loads(run("annotators", "token", "cy", "--json"))["token"]
    token = json.loads(run("annotators", "token", "cy", "--json"))["token"]  # rotated
    with session_scope(engine) as s:
        stored = s.exec(select(Annotator.serve_token_hash).where(Annotator.name == "cy")).one()
    assert stored is not None and token not in stored and len(stored) == 64
    server = GuardedServer(account_logins(AppContext(db=str(db_path))), host="127.0.0.1", port=8000)
    login = server.login_for(token)
    assert login is not None and shlex.split(login.command)[-2:] == ["--as", "cy"]
    assert server.login_for(first) is None  # the replaced token no longer works
    assert server.url_for(login).endswith("/?token=YOUR-TOKEN")  # the server never knew the token
    assert "serve login removed" in run("annotators", "token", "cy", "--revoke")
    assert account_logins(AppContext(db=str(db_path))) == []


def test_origins() -> None:
    assert origin_of("http://127.0.0.1:8000/x") == "http://127.0.0.1:8000"
    assert origin_of("https://lab.example:443") == "https://lab.example"
    assert allowed_origins("http://127.0.0.1:8000") == {
        "http://127.0.0.1:8000",
        "http://localhost:8000",
        "http://[::1]:8000",
    }
    assert allowed_origins("https://lab.example") == {"https://lab.example"}


class _Session:
    """Stands in for a session's app process: answers each chunk request from a byte string."""

    def __init__(self, manager, key: str, data: bytes) -> None:  # type: ignore[no-untyped-def]
        self.manager, self.key, self.data, self.app_service_id = manager, key, data, "s1"

    async def send_meta(self, meta) -> bool:  # type: ignore[no-untyped-def]
        chunk, self.data = self.data[: meta["size"]], self.data[meta["size"] :]
        await self.manager.chunk_received(self.key, chunk)
        return True


@pytest.mark.parametrize(
    ("mime", "method", "inline"),
    [("image/png", "browser", True), ("image/svg+xml", "browser", False), ("text/html", "browser", False)],
)
async def test_downloads_show_only_plain_images_inline(db_path, mime, method, inline) -> None:  # type: ignore[no-untyped-def]
    """An original image opens in the browser as pixels; anything that could run script is a download."""
    server_obj = guarded(db_path, 0)
    manager = server_obj.download_manager
    data = b"\x89PNG fake" * 10_000
    await manager.create_download(
        app_service=_Session(manager, "k1", data),  # type: ignore[arg-type]
        delivery_key="k1",
        file_name='x"; evil=.png',
        open_method=method,
        mime_type=mime,
    )
    server = TestServer(await server_obj._make_app(), host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{server.port}/download/k1") as r:
                body = await r.read()
                headers = r.headers
            async with http.get(f"http://127.0.0.1:{server.port}/download/k1") as again:
                assert again.status == 404  # a link works once
    finally:
        await server.close()
    assert body == data
    assert headers["X-Content-Type-Options"] == "nosniff" and "sandbox" in headers["Content-Security-Policy"]
    assert headers["Content-Type"] == (mime if inline else "application/octet-stream")
    disposition = headers["Content-Disposition"]
    assert disposition.startswith("inline" if inline else "attachment") and '"' not in disposition.split('"')[1]
