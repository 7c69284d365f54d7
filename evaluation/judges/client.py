"""Calling a judge model on an OpenAI-compatible endpoint, with a record/replay cache.

The call goes through the one model-call layer (``evaluation.modelcall``: endpoint, retries,
redaction). Every call is keyed with the one replay key, kind ``judge``, over (prompt hash, model,
sampling parameters), in ``ReplayCache``: asking again — for a re-judge, another scorer, a rebuilt
database copy, another server with the same model — returns the recorded reply and never calls the
model. The API key is read from the environment variable the endpoint names and never written anywhere.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from evaluation.modelcall.endpoint import EndpointError, EndpointSpec
from evaluation.modelcall.replay_key import replay_key
from evaluation.modelcall.reply import ModelCallError
from evaluation.modelcall.sync_client import chat
from store.blobs import BlobStore
from store.models import Asset, ReplayCache


class JudgeError(RuntimeError):
    """A judge cannot be asked (no endpoint, no key, the server failed); the message says which."""

    kept: int | None = None  # set by ``judge_run``: how many answers it had stored before this failure
    expected = True  # the CLI prints the message as it is: it says what to do, it is no bug


class JudgeKeyRefused(JudgeError):
    """The endpoint refused the API key (HTTP 401/403): every further call would be refused too."""


_KEY_REFUSED = frozenset({401, 403})


def call_params(endpoint: EndpointSpec, template_params: dict[str, Any]) -> dict[str, Any]:
    """Endpoint sampling defaults, overridden by what the template fixes (a judge runs at its own temperature)."""
    allowed = ("temperature", "max_tokens", "top_p", "seed", "response_format")
    params = {k: v for k, v in endpoint.params.items() if k in allowed}
    params.update(template_params)
    return params


def cache_key(prompt_hash: str, endpoint: EndpointSpec, params: dict[str, Any]) -> str:
    """What was asked (the prompt, images included, by its hash), of which model and how; not where."""
    return replay_key("judge", {"prompt": prompt_hash, "model": endpoint.model, "params": params})


def cached_reply(session: Session, key: str) -> str | None:
    row = session.exec(select(ReplayCache).where(ReplayCache.key == key)).first()
    if row is None or not isinstance(row.response, dict):
        return None
    return str(row.response.get("content") or "")


def cached_replies(session: Session, keys: list[str]) -> dict[str, str]:
    """``cached_reply`` for many keys in one query per 500 (a round's questions)."""
    out: dict[str, str] = {}
    wanted = sorted(set(keys))
    for start in range(0, len(wanted), 500):
        rows = session.exec(
            select(ReplayCache.key, ReplayCache.response).where(ReplayCache.key.in_(wanted[start : start + 500]))  # type: ignore[attr-defined]
        ).all()
        for key, response in rows:
            if isinstance(response, dict) and key not in out:
                out[key] = str(response.get("content") or "")
    return out


def resolve_images(session: Session, blobs: BlobStore, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace ``{"type": "image", "ref"}`` parts by OpenAI ``image_url`` data-URL parts."""
    out = []
    for m in messages:
        if isinstance(m["content"], str):
            out.append(m)
            continue
        parts = []
        for p in m["content"]:
            if p.get("type") != "image":
                parts.append(p)
                continue
            ref = p["ref"]
            if isinstance(ref, int) and not isinstance(ref, bool):
                asset = session.get(Asset, ref)
                if asset is None:
                    raise JudgeError(f"image asset {ref} does not exist")
                data, mime = blobs.get(asset.sha256, session), asset.mime
            else:
                path = Path(str(ref))
                if not path.is_file():
                    raise JudgeError(f"image {ref!r} is neither a stored asset nor a readable file")
                data, mime = path.read_bytes(), mimetypes.guess_type(path.name)[0] or "image/png"
            url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        out.append({"role": m["role"], "content": parts})
    return out


def _what_to_do(endpoint: EndpointSpec, exc: Exception) -> str:
    """The step that fixes a refused key (HTTP 401/403), as a sentence to append; else nothing."""
    if getattr(exc, "status", None) not in (401, 403):
        return ""
    where = f"${endpoint.api_key_env}" if endpoint.api_key_env else "no key variable (endpoints add --api-key-env)"
    return f"; check the API key the endpoint reads from {where}"


def complete(
    endpoint: EndpointSpec, messages: list[dict[str, Any]], params: dict[str, Any], *, timeout: float = 120.0
) -> dict[str, Any]:
    """One chat completion; returns ``{"content", "usage", "model"}`` or raises JudgeError (redacted)."""
    try:
        reply = chat(endpoint, messages, params={"timeout": timeout, **params})
    except ModelCallError as exc:
        if exc.status in _KEY_REFUSED:
            raise JudgeKeyRefused(
                f"the judge endpoint refused the key: {endpoint.name!r} said {exc}{_what_to_do(endpoint, exc)}"
            ) from exc
        raise JudgeError(f"judge endpoint {endpoint.name!r} failed: {exc}") from exc
    except EndpointError as exc:
        raise JudgeError(f"judge endpoint {endpoint.name!r} failed: {exc}") from exc
    return {"content": reply.content or "", "usage": reply.usage, "model": endpoint.model}
