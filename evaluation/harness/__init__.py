"""The agent harness: run models on a benchmark in the protocol its paper used, concurrently,
resumably and replayably, recording every event (see ARCHITECTURE.md "Harness").

    from evaluation.harness import RunSpec, create_run, execute_run, run_blocking

The names below load with the module that defines them, on first use: importing one submodule
(``evaluation.harness.lease`` for ``chainmark runs list``) does not import the model client and
the whole runner with it (bench/bench_startup.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluation.harness.budgets import Budgets
    from evaluation.harness.client import ModelCallError, ReplayMiss, RetryPolicy
    from evaluation.harness.endpoints import EndpointError, EndpointSpec, add_endpoint, get_endpoint, list_endpoints
    from evaluation.harness.modes import MODES
    from evaluation.harness.runner import (
        RunError,
        RunProgress,
        RunSpec,
        create_run,
        execute_run,
        run_blocking,
        start_run,
    )

_WHERE = {
    "Budgets": "budgets",
    "RetryPolicy": "client",
    "ModelCallError": "client",
    "ReplayMiss": "client",
    "EndpointError": "endpoints",
    "EndpointSpec": "endpoints",
    "add_endpoint": "endpoints",
    "get_endpoint": "endpoints",
    "list_endpoints": "endpoints",
    "MODES": "modes",
    "RunError": "runner",
    "RunProgress": "runner",
    "RunSpec": "runner",
    "create_run": "runner",
    "execute_run": "runner",
    "run_blocking": "runner",
    "start_run": "runner",
}
__all__ = [
    "Budgets",
    "RetryPolicy",
    "ModelCallError",
    "ReplayMiss",
    "EndpointError",
    "EndpointSpec",
    "add_endpoint",
    "get_endpoint",
    "list_endpoints",
    "MODES",
    "RunError",
    "RunProgress",
    "RunSpec",
    "create_run",
    "execute_run",
    "run_blocking",
    "start_run",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
