"""Drafting aids (Agentic-MME §2.3–2.4) against a configured OpenAI-compatible endpoint.

*Describe*: ask the model what it sees in the raw image, to show the annotator what a model misses.
*Oracle check*: give the model the query plus the reference chain's observations and see whether it
reaches the answer; if it cannot even then, the task (or its chain) needs work.

Endpoints are ``ModelEndpoint`` rows; the key comes from the env var the row names, never the DB.
Results are kept on the task's ``meta["drafting"]`` (not a content edit, so no revision bump).
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, select

from store.models import Benchmark, ModelEndpoint, Task

DESCRIBE_PROMPT = ("Describe this image in detail for someone who cannot see it: objects, text, numbers, "
                   "layout and anything unusual. Be factual.")
ORACLE_PROMPT = ("Answer the question using the observations gathered by tools on the image. Reply with the "
                 "final answer only, on one line.\n\nQuestion: {query}\n\nObservations:\n{observations}")


class DraftingError(ValueError):
    """No usable endpoint, or the endpoint failed; the message says what to configure."""


@dataclass(frozen=True)
class EndpointConfig:
    name: str
    base_url: str
    model: str
    api_key_env: str | None
    params: dict[str, Any]


def endpoint_for(session: Session, task: Task) -> EndpointConfig:
    """The benchmark's ``settings["drafting_endpoint"]``, else the only/first configured endpoint."""
    bench = session.get(Benchmark, task.benchmark_id)
    wanted = (bench.settings or {}).get("drafting_endpoint") if bench else None
    stmt = select(ModelEndpoint).order_by(ModelEndpoint.name)
    if wanted:
        stmt = stmt.where(ModelEndpoint.name == wanted)
    ep = session.exec(stmt).first()
    if ep is None:
        raise DraftingError(f"no model endpoint {wanted!r} is configured" if wanted else
                            "no model endpoint is configured; add one (ModelEndpoint) to use drafting aids")
    return EndpointConfig(ep.name, ep.base_url, ep.model, ep.api_key_env, dict(ep.params or {}))


def _client(ep: EndpointConfig) -> Any:
    from openai import OpenAI

    key = os.environ.get(ep.api_key_env) if ep.api_key_env else None
    if ep.api_key_env and not key:
        raise DraftingError(f"endpoint {ep.name} reads its API key from ${ep.api_key_env}, which is not set")
    return OpenAI(base_url=ep.base_url, api_key=key or "none", timeout=120.0, max_retries=1)


def _chat(ep: EndpointConfig, content: Any) -> str:
    params = {k: v for k, v in ep.params.items() if k in ("temperature", "max_tokens", "top_p", "seed")}
    try:
        reply = _client(ep).chat.completions.create(model=ep.model, messages=[{"role": "user", "content": content}],
                                                    **params)
    except DraftingError:
        raise
    except Exception as exc:  # noqa: BLE001 - connection/HTTP errors become one clear line
        raise DraftingError(f"endpoint {ep.name} ({ep.base_url}) failed: {type(exc).__name__}: {exc}") from exc
    return (reply.choices[0].message.content or "").strip()


def describe_image(ep: EndpointConfig, image: bytes, mime: str = "image/png") -> str:
    url = f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"
    return _chat(ep, [{"type": "text", "text": DESCRIBE_PROMPT}, {"type": "image_url", "image_url": {"url": url}}])


def observations(steps: list[Any]) -> str:
    lines = []
    for s in steps:
        if s.tool_name and not s.is_final:
            lines.append(f"- {s.tool_name}({s.tool_args}) → {s.result_text or '(image)'}")
    return "\n".join(lines) or "(none)"


def oracle_answer(ep: EndpointConfig, query: str, steps: list[Any]) -> str:
    return _chat(ep, ORACLE_PROMPT.format(query=query, observations=observations(steps)))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w.%-]+", " ", text.lower()).split())


def reaches(answer: str, spec: dict[str, Any]) -> bool:
    """A lenient check for drafting only (scoring proper lives in evaluation): does ``answer`` hit the spec?"""
    kind, got = spec.get("kind"), _norm(answer)
    if kind in ("exact", "contains"):
        return any(_norm(str(v)) in got for v in [spec.get("value"), *(spec.get("variants") or [])] if v)
    if kind == "numeric":
        tol = float(spec.get("tolerance") or 0)
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", answer.replace(",", ""))]
        return any(abs(n - float(spec["value"])) <= tol + 1e-9 for n in numbers)
    if kind == "whitelist":
        return all(any(_norm(a) in got for a in group) for group in spec.get("groups") or [])
    if kind == "mcq":
        return re.search(rf"\b{re.escape(str(spec.get('letter', '')).lower())}\b", answer.lower()) is not None
    if kind == "references":
        return any(_norm(r) in got for r in spec.get("references") or [])
    return False


def save_drafting(session: Session, task_id: int, key: str, value: Any) -> None:
    task = session.get(Task, task_id)
    if task is None:
        raise LookupError(f"no task with id {task_id}")
    meta = dict(task.meta or {})
    drafting = dict(meta.get("drafting") or {})
    drafting[key] = value
    meta["drafting"] = drafting
    task.meta = meta
    session.flush()
