"""Model endpoints stored by name. The API key is only ever read from the environment variable whose
*name* the endpoint stores, at the moment a client is built; it never reaches the database or a log."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from evaluation.modelcall.endpoint import EndpointError, EndpointSpec
from store import core_tables as t

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.models import ModelEndpoint

# Parameters that belong to the request body; anything else is refused so typos are caught early.
SAMPLING_PARAMS = {
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "top_k",
    "timeout",
    "parallel_tool_calls",
    "reasoning_effort",
    "extra_body",
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _spec(row: ModelEndpoint | Any) -> EndpointSpec:
    return EndpointSpec.of(row)


def parse_param(text: str) -> tuple[str, Any]:
    """``k=v`` from the CLI; the value is JSON when it parses (numbers, lists), else a string."""
    import json

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise EndpointError(f"--param must look like key=value, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    return key.strip(), parsed


def validate_params(params: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(params) - SAMPLING_PARAMS)
    if unknown:
        raise EndpointError(
            f"unknown endpoint parameter(s): {', '.join(unknown)}; allowed: {', '.join(sorted(SAMPLING_PARAMS))}"
        )
    return params


def add_endpoint(
    session: Session,
    name: str,
    base_url: str,
    model: str,
    *,
    api_key_env: str | None = None,
    params: dict[str, Any] | None = None,
    replace: bool = False,
) -> EndpointSpec:
    """Create (or with ``replace`` overwrite) an endpoint. A value that looks like a key is refused."""
    from sqlmodel import select

    from store.models import ModelEndpoint

    if not name.strip():
        raise EndpointError("an endpoint needs a name")
    if not re.match(r"^https?://", base_url):
        raise EndpointError(f"base URL must start with http:// or https://, got {base_url!r}")
    if api_key_env is not None:
        if not _ENV_NAME.match(api_key_env) or (len(api_key_env) >= 24 and not api_key_env.isupper()):
            raise EndpointError(
                "--api-key-env takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself"
            )
    params = validate_params(dict(params or {}))
    row = session.exec(select(ModelEndpoint).where(ModelEndpoint.name == name)).first()
    if row is not None and not replace:
        raise EndpointError(f"an endpoint named {name!r} exists; use --replace to overwrite it")
    if row is None:
        row = ModelEndpoint(name=name, base_url=base_url, model=model)
        session.add(row)
    row.base_url, row.model, row.api_key_env, row.params = base_url.rstrip("/"), model, api_key_env, params
    session.flush()
    return _spec(row)


_ENDPOINT = sa.select(*(t.modelendpoint.c[n] for n in ("id", "name", "base_url", "model", "api_key_env", "params")))


def get_endpoint(reader: Any, name_or_id: str | int) -> EndpointSpec:
    """The endpoint with that id (a number) or else that name, read in SQLAlchemy Core (a run's
    connection, or an ORM session)."""
    c = t.modelendpoint.c
    if isinstance(name_or_id, int) or str(name_or_id).isdigit():
        row = reader.execute(_ENDPOINT.where(c.id == int(name_or_id))).first()
        if row is not None:
            return _spec(row)
    row = reader.execute(_ENDPOINT.where(c.name == str(name_or_id))).first()
    if row is None:
        known = ", ".join(reader.execute(sa.select(c.name)).scalars()) or "none yet"
        raise EndpointError(
            f"no endpoint named {name_or_id!r} (known: {known}); add one with `chainmark endpoints add`"
        )
    return _spec(row)


def list_endpoints(session: Session) -> list[EndpointSpec]:
    from sqlmodel import select

    from store.models import ModelEndpoint

    return [_spec(r) for r in session.exec(select(ModelEndpoint).order_by(ModelEndpoint.name)).all()]
