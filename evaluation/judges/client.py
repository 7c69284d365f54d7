"""Calling a judge model on an OpenAI-compatible endpoint, with a record/replay cache.

Every call is keyed by (prompt hash, endpoint URL, model, sampling parameters) in ``ReplayCache``
(kind ``judge``): asking again — for a re-judge, another scorer, a rebuilt database copy — returns the
recorded reply and never calls the model. The API key is read from the environment variable the
endpoint names and never written anywhere.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from evaluation.scoring.items import stable_hash
from store.blobs import BlobStore
from store.models import Asset, ModelEndpoint, ReplayCache


class JudgeError(RuntimeError):
    """A judge cannot be asked (no endpoint, no key, the server failed); the message says which."""


@dataclass
class EndpointInfo:
    name: str
    base_url: str
    model: str
    api_key_env: str | None
    params: dict[str, Any]

    @staticmethod
    def of(ep: ModelEndpoint) -> "EndpointInfo":
        return EndpointInfo(ep.name, ep.base_url, ep.model, ep.api_key_env, dict(ep.params or {}))

    def api_key(self) -> str:
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise JudgeError(f"endpoint {self.name!r} reads its API key from ${self.api_key_env}, which is not set")
            return key
        return "no-key"


def call_params(endpoint: EndpointInfo, template_params: dict[str, Any]) -> dict[str, Any]:
    """Endpoint sampling defaults, overridden by what the template fixes (a judge runs at its own temperature)."""
    allowed = ("temperature", "max_tokens", "top_p", "seed", "response_format")
    params = {k: v for k, v in endpoint.params.items() if k in allowed}
    params.update(template_params)
    return params


def cache_key(prompt_hash: str, endpoint: EndpointInfo, params: dict[str, Any]) -> str:
    return stable_hash({"prompt": prompt_hash, "base_url": endpoint.base_url.rstrip("/"), "model": endpoint.model,
                        "params": params})


def cached_reply(session: Session, key: str) -> str | None:
    row = session.exec(select(ReplayCache).where(ReplayCache.key == key)).first()
    if row is None or not isinstance(row.response, dict):
        return None
    return str(row.response.get("content") or "")


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


def complete(endpoint: EndpointInfo, messages: list[dict[str, Any]], params: dict[str, Any],
             *, timeout: float = 120.0) -> dict[str, Any]:
    """One chat completion; returns ``{"content", "usage", "model"}`` or raises JudgeError."""
    import openai

    client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key(), timeout=timeout, max_retries=2)
    try:
        resp = client.chat.completions.create(model=endpoint.model, messages=messages, **params)  # type: ignore[arg-type]
    except openai.APIError as exc:
        raise JudgeError(f"judge endpoint {endpoint.name!r} failed: {exc.__class__.__name__}: {exc}") from exc
    if not resp.choices:
        raise JudgeError(f"judge endpoint {endpoint.name!r} returned no choices")
    usage = resp.usage.model_dump() if resp.usage is not None else {}
    return {"content": resp.choices[0].message.content or "", "usage": usage, "model": resp.model}
