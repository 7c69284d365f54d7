"""Drafting aids (Agentic-MME §2.3–2.4) against a configured OpenAI-compatible endpoint.

Callers read what a question needs in one short transaction, ask the model outside any transaction,
and save the answer in another (``save_drafting``): a model call never holds the database.

*Describe*: ask the model what it sees in the raw image, to show the annotator what a model misses.
*Oracle check*: give the model the query plus the reference chain's observations and see whether it
reaches the answer; if it cannot even then, the task (or its chain) needs work.

Endpoints are ``ModelEndpoint`` rows; the key comes from the env var the row names, never the DB.
Results are kept on the task's ``meta["drafting"]`` (not a content edit, so no revision bump).
"""

from __future__ import annotations

import base64
from typing import Any

from sqlmodel import Session, select

from evaluation.modelcall.endpoint import EndpointError, EndpointSpec
from evaluation.modelcall.reply import ModelCallError
from evaluation.modelcall.sync_client import chat
from evaluation.scoring.matchers import match_answer_spec
from store.models import Benchmark, ModelEndpoint, Task

DESCRIBE_PROMPT = (
    "Describe this image in detail for someone who cannot see it: objects, text, numbers, "
    "layout and anything unusual. Be factual."
)
ORACLE_PROMPT = (
    "Answer the question using the observations gathered by tools on the image. Reply with the "
    "final answer only, on one line.\n\nQuestion: {query}\n\nObservations:\n{observations}"
)


class DraftingError(ValueError):
    """No usable endpoint, or the endpoint failed; the message says what to configure."""


def endpoint_for(session: Session, task: Task) -> EndpointSpec:
    """The benchmark's ``settings["drafting_endpoint"]``, else the only/first configured endpoint."""
    bench = session.get(Benchmark, task.benchmark_id)
    wanted = (bench.settings or {}).get("drafting_endpoint") if bench else None
    stmt = select(ModelEndpoint).order_by(ModelEndpoint.name)
    if wanted:
        stmt = stmt.where(ModelEndpoint.name == wanted)
    ep = session.exec(stmt).first()
    if ep is None:
        raise DraftingError(
            f"no model endpoint {wanted!r} is configured"
            if wanted
            else "no model endpoint is configured; add one (ModelEndpoint) to use drafting aids"
        )
    return EndpointSpec.of(ep)


def _chat(ep: EndpointSpec, content: Any) -> str:
    """One question through the one model-call layer (retries, redaction); errors as one clear line."""
    params = {k: v for k, v in ep.params.items() if k in ("temperature", "max_tokens", "top_p", "seed")}
    try:
        reply = chat(ep, [{"role": "user", "content": content}], params={"timeout": 120.0, **params})
    except (EndpointError, ModelCallError) as exc:
        raise DraftingError(f"endpoint {ep.name} ({ep.base_url}) failed: {exc}") from exc
    return (reply.content or "").strip()


def describe_image(ep: EndpointSpec, image: bytes, mime: str = "image/png") -> str:
    url = f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"
    return _chat(ep, [{"type": "text", "text": DESCRIBE_PROMPT}, {"type": "image_url", "image_url": {"url": url}}])


def observations(steps: list[Any]) -> str:
    lines = []
    for s in steps:
        if s.tool_name and not s.is_final:
            lines.append(f"- {s.tool_name}({s.tool_args}) → {s.result_text or '(image)'}")
    return "\n".join(lines) or "(none)"


def oracle_answer(ep: EndpointSpec, query: str, steps: list[Any]) -> str:
    return _chat(ep, ORACLE_PROMPT.format(query=query, observations=observations(steps)))


def reaches(answer: str, spec: dict[str, Any]) -> bool | None:
    """Does ``answer`` hit the task's answer spec? The scorers' own matcher (fixed mode), so drafting
    and scoring never disagree; None for kinds only a judge or an embedder can check."""
    return match_answer_spec(spec or {}, answer, "fixed")


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
