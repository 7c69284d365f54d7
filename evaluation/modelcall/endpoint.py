"""The one endpoint value every model caller uses: a plain copy of a ``ModelEndpoint`` row, safe to
pass between threads. The API key is only ever read from the environment variable whose *name* the
endpoint stores, at the moment a client is built; it never reaches the database or a log."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from evaluation.modelcall.redact import known_secret_env


class EndpointError(ValueError):
    """A bad endpoint definition or a missing key; the message says what to fix."""


@dataclass(frozen=True)
class EndpointSpec:
    """A plain copy of an endpoint row (safe to pass between threads)."""

    id: int
    name: str
    base_url: str
    model: str
    api_key_env: str | None
    params: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(row: Any) -> "EndpointSpec":
        """From a ``ModelEndpoint`` row (or anything with its fields)."""
        return EndpointSpec(
            getattr(row, "id", None) or 0, row.name, row.base_url, row.model, row.api_key_env, dict(row.params or {})
        )

    def api_key(self, required: bool = True) -> str:
        """The key from the environment; local servers without a key get a placeholder."""
        if not self.api_key_env:
            return "no-key"
        known_secret_env(self.api_key_env)
        value = os.environ.get(self.api_key_env)
        if value:
            return value
        if required:
            raise EndpointError(f"endpoint {self.name!r} reads its API key from ${self.api_key_env}, which is not set")
        return "no-key"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "params": self.params,
            "key_present": bool(self.api_key_env and os.environ.get(self.api_key_env)),
        }
