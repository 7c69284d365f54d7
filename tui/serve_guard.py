"""The web server behind ``chainmark serve``: textual-serve with a login token per user and an Origin check.

textual-serve alone starts a TUI for anyone who opens its websocket, from any web page (a page on
``evil.example`` could drive the TUI of a user who has ``chainmark serve`` running). Here:

- every URL carries a secret token (``/?token=…``; the websocket is ``/ws/<token>``); each token belongs
  to one user, and that user's sessions run ``chainmark --as <user>``, so the audit trail names them;
- the websocket is accepted only with the ``Origin`` the page was served from (browsers always send it,
  and a foreign page cannot forge it);
- tokens are compared in constant time, refusals are logged with the peer address;
- with stored accounts (``--accounts``) the logins are read again every second: a token revoked or
  replaced (``chainmark annotators token``) ends that person's open sessions and lets no new one in,
  and a token issued meanwhile works without a restart.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from annotation.review.annotators import token_hash

log = logging.getLogger("chainmark.serve")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
ACCOUNTS_EVERY_S = 1.0  # how often stored accounts are read again: a revocation bites within about that


@dataclass(frozen=True)
class Login:
    """Who a token lets in and what their sessions run. Only the token's sha256 is needed to check it;
    ``token`` is known only for logins made up for this server (printed once) — a stored account's
    token (``chainmark annotators token``) is with its owner, not here."""

    user: str
    token_hash: str
    command: str  # what this user's sessions run
    token: str | None = None

    @staticmethod
    def with_token(user: str, token: str, command: str) -> "Login":
        return Login(user, token_hash(token), command, token)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` as a browser writes it in ``Origin`` (default ports left out)."""
    parts = urlsplit(url)
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def allowed_origins(public_url: str) -> set[str]:
    """The served origin; for a loopback address also its other loopback spellings (same port)."""
    origin = origin_of(public_url)
    parts = urlsplit(origin)
    out = {origin}
    host = parts.netloc.rsplit(":", 1)[0] if parts.port else parts.netloc
    if host in LOOPBACK_NAMES:
        suffix = f":{parts.port}" if parts.port else ""
        out |= {f"{parts.scheme}://{name}{suffix}" for name in LOOPBACK_NAMES}
    return out


async def _reap(service: AppService, grace: float = 10.0) -> None:
    """Wait for the session's app process to exit (killed after ``grace`` seconds), so none outlives its
    session. (textual-serve keeps the process in ``_process`` and does not wait for it.)"""
    process = getattr(service, "_process", None)
    if process is None or process.returncode is not None:
        return
    try:
        await asyncio.wait_for(process.wait(), grace)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()


class GuardedServer(Server):
    """A textual-serve ``Server`` that serves only holders of a token, to pages of its own origin."""

    def __init__(
        self,
        logins: list[Login],
        *,
        accounts: Callable[[], list[Login]] | None = None,
        accounts_every_s: float = ACCOUNTS_EVERY_S,
        **kwargs: Any,
    ):
        """``logins`` are fixed for the server's life; ``accounts`` (stored logins) is called again every
        ``accounts_every_s`` seconds, and what it no longer returns is let in no more."""
        super().__init__(logins[0].command, **kwargs)
        self.fixed = [login for login in logins if accounts is None or login.token is not None]
        self.logins = list(logins)
        self.accounts, self.accounts_every_s = accounts, accounts_every_s
        self.origins = allowed_origins(self.public_url)
        self.sessions: set[AppService] = set()
        self.session_login: dict[AppService, tuple[Login, web.WebSocketResponse]] = {}
        self._watch: asyncio.Task[None] | None = None

    def login_for(self, token: str | None) -> Login | None:
        if not token:
            return None
        found = None
        presented = token_hash(token).encode()
        for login in self.logins:  # every login compared, in constant time, whatever matches
            if hmac.compare_digest(login.token_hash.encode(), presented):
                found = login
        return found

    def url_for(self, login: Login) -> str:
        return f"{self.public_url}/?token={login.token or 'YOUR-TOKEN'}"

    async def _make_app(self) -> web.Application:
        app = web.Application()
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws/{token}", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """(The URLs with their tokens are printed by the command, once.)"""
        if self.accounts is not None:
            self._watch = asyncio.create_task(self._watch_accounts())

    async def on_shutdown(self, app: web.Application) -> None:
        """Every open session's app is told to quit and waited for, so none outlives the server."""
        if self._watch is not None:
            self._watch.cancel()
        await asyncio.gather(*(s.stop() for s in list(self.sessions)), return_exceptions=True)

    async def _watch_accounts(self) -> None:
        """Read the stored accounts again and again; end the sessions of logins that are gone."""
        assert self.accounts is not None
        while True:
            await asyncio.sleep(self.accounts_every_s)
            try:
                stored = await asyncio.to_thread(self.accounts)
            except Exception:  # a busy or unreachable database: keep the logins as they were, try again
                log.warning("could not read the serve accounts again; keeping the current logins", exc_info=True)
                continue
            self.logins = self.fixed + stored
            await self.end_sessions_not_in(self.logins)

    async def end_sessions_not_in(self, logins: list[Login]) -> None:
        """Close every session whose login is not among ``logins`` (revoked, or its token replaced)."""
        current = {(login.user, login.token_hash) for login in logins}
        for login, websocket in list(self.session_login.values()):
            if (login.user, login.token_hash) not in current:
                log.warning("ending the session of %s: their serve login was revoked or replaced", login.user)
                await websocket.close(code=4001, message=b"serve login revoked")

    def _refuse(self, request: web.Request, status: type[web.HTTPException], why: str) -> web.HTTPException:
        log.warning(
            "refused %s %s from %s: %s", request.method, request.path.split("/ws/")[0] or "/", request.remote, why
        )
        return status(text=f"chainmark serve: {why}\n")

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        token = request.query.get("token")
        login = self.login_for(token)
        if login is None or token is None:
            raise self._refuse(
                request,
                web.HTTPForbidden,
                "open the URL with your token (…/?token=…): the one "
                "`chainmark serve` printed, or `chainmark annotators token`",
            )
        ws_base = ("wss:" if self.public_url.startswith("https") else "ws:") + self.public_url.split(":", 1)[1]
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{ws_base}/ws/{token}",
            "config": {"static": {"url": f"{self.public_url}/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.headers["Referrer-Policy"] = "no-referrer"  # the token is in the URL
        response.headers["Cache-Control"] = "no-store"
        return response

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        """A file a session handed over (an original image: ``o`` in the zoom view). Its key is a
        single-use random name known only to that session's page. Only plain image types are shown
        inline, with sniffing and scripts off; anything else is a download."""
        from tui.images import BROWSER_SAFE

        key = request.match_info["key"]
        try:
            meta = await self.download_manager.get_download_metadata(key)
        except KeyError:
            raise web.HTTPNotFound(text="no such download (each link works once)\n") from None
        inline = meta.open_method == "browser" and meta.mime_type in BROWSER_SAFE.values()
        response = web.StreamResponse()
        response.headers["Content-Type"] = meta.mime_type if inline else "application/octet-stream"
        safe_name = "".join(c if c.isalnum() or c in ".-" else "-" for c in meta.file_name)[:100] or "download"
        response.headers["Content-Disposition"] = f'{"inline" if inline else "attachment"}; filename="{safe_name}"'
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Content-Security-Policy"] = "default-src 'none'; img-src 'self'; sandbox"
        response.headers["Cache-Control"] = "no-store"
        await response.prepare(request)
        async for chunk in self.download_manager.download(key):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin not in self.origins:
            raise self._refuse(
                request,
                web.HTTPForbidden,
                f"websocket from origin {origin!r}; only {', '.join(sorted(self.origins))} may connect",
            )
        login = self.login_for(request.match_info.get("token"))
        if login is None:
            raise self._refuse(request, web.HTTPForbidden, "websocket without a valid token")
        log.info("session for %s from %s", login.user, request.remote)
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        service: AppService | None = None
        try:
            await websocket.prepare(request)
            service = AppService(
                login.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            self.sessions.add(service)
            self.session_login[service] = (login, websocket)
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception:
            log.exception("session for %s failed", login.user)
        finally:
            if service is not None:
                await service.stop()
                await _reap(service)
                self.sessions.discard(service)
                self.session_login.pop(service, None)
            log.info("session for %s ended", login.user)
        return websocket
