"""Where a chat request goes and the headers it carries, as the openai client sent them.

The URL joins ``chat/completions`` onto the base URL the way the openai client does: a slash is
added to the base path unless it ends in one (``…/v1`` and ``…/v1/`` both give
``…/v1/chat/completions``; a base without ``/v1`` gets none). Headers: the key only in
``Authorization``, JSON both ways, and the organization and project the openai client read from
``$OPENAI_ORG_ID`` / ``$OPENAI_PROJECT_ID``. Its ``X-Stainless-*`` telemetry headers are not sent."""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request

USER_AGENT = "chainmark/0.1 (OpenAI-compatible chat client)"


def chat_url(base_url: str) -> str:
    head, sep, query = base_url.partition("?")
    if not head.endswith("/"):
        head += "/"
    return head + "chat/completions" + sep + query


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, in
    either case, with ``NO_PROXY`` honoured), as httpx2 and the openai client took it; None: connect
    directly. The run's aiohttp sessions read no environment (netrc lookups would cost a thread hop
    per request), so they are handed this."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def request_headers(api_key: str) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Accept": "application/json",
        "Content-Type": "application/json",
        "Accept-Encoding": "gzip, deflate",
        "User-Agent": USER_AGENT,
    }
    for name, env in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
        value = os.environ.get(env)
        if value:
            headers[name] = value
    return headers


def json_body(body: dict[str, object]) -> bytes:
    """A body as the openai client serialised one it was given as a mapping (``extra_body`` merged)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
