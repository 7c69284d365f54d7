"""The HTTP transport the model client and the tools' service calls share: aiohttp imported on first
use, one POST with its failures classed as the openai client classed them, and the TLS contexts an
endpoint needs."""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Any

from evaluation.modelcall.failures import StatusFailure, TransportFailure

if TYPE_CHECKING:
    import aiohttp


def load_transport() -> Any:
    """The aiohttp module, imported on first use (``runner`` also loads it before forking harness
    processes, so they inherit it instead of each importing it)."""
    import aiohttp

    return aiohttp


async def post_bytes(http: Any, session: aiohttp.ClientSession, url: str, data: bytes, **request: Any) -> bytes:
    """POST ``data`` with aiohttp (``http``, the module): the body of a 2xx/3xx answer; a
    ``StatusFailure`` or ``TransportFailure`` otherwise, classed as httpx2 and the openai client class them."""
    try:
        async with session.post(url, data=data, **request) as response:
            raw = await response.read()
            if response.status >= 400:
                raise StatusFailure(response.status, raw, response.headers.get("retry-after"))
            return raw
    except http.ClientResponseError as exc:  # not valid HTTP, or redirects without end: as httpx2's
        why = " ".join(str(exc.message).split())[:200] or type(exc).__name__
        raise TransportFailure("connection", f"no usable HTTP answer ({why})") from exc
    except http.ClientPayloadError as exc:  # the body was cut short
        raise TransportFailure("connection") from exc
    except http.ServerDisconnectedError as exc:
        raise TransportFailure("timeout", "the server closed the connection without answering") from exc
    except (http.ClientConnectionError, TimeoutError) as exc:  # timeouts are connection errors too
        raise TransportFailure("timeout") from exc
    except (http.ClientError, OSError) as exc:
        raise TransportFailure("connection") from exc


def needs_tls(base_url: str) -> bool:
    return not base_url.lower().startswith("http://")


def tls_context() -> Any:
    """The TLS context an ``https`` endpoint needs (the CA bundle httpx2 would load; loading it takes
    tens of milliseconds): runs make it on another thread while they prepare (see ``plain_http_tls``)."""
    import httpx2

    return httpx2.create_ssl_context()


def plain_http_tls() -> ssl.SSLContext:
    """For a plain-``http`` endpoint: a context that verifies certificates but trusts none. The
    client never uses it, unless the endpoint redirects to ``https``, and that then fails loudly
    instead of going unverified. It costs nothing to build, unlike loading a CA bundle."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
