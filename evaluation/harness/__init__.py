"""The agent harness: run models on a benchmark in the protocol its paper used, concurrently,
resumably and replayably, recording every event (see ARCHITECTURE.md "Harness").

    from evaluation.harness import RunSpec, create_run, execute_run, run_blocking
"""

from evaluation.harness.budgets import Budgets
from evaluation.harness.client import ModelCallError, ReplayMiss, RetryPolicy
from evaluation.harness.endpoints import EndpointError, EndpointSpec, add_endpoint, get_endpoint, list_endpoints
from evaluation.harness.modes import MODES
from evaluation.harness.runner import RunError, RunProgress, RunSpec, create_run, execute_run, run_blocking, start_run

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
