"""One trajectory of a run: what every trajectory of the run shares (its context, model client and
progress counts) and running one to its end. Below both the run's executor (``runner``) and the
harness's child processes (``procs_child``), which run trajectories with it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from evaluation.harness.budgets import BudgetExhausted, Budgets
from evaluation.harness.client import ModelCallError, ModelClient, RetryPolicy, needs_tls, tls_context
from evaluation.harness.endpoints import EndpointError
from evaluation.harness.episode import DEFAULT_MAX_REPLY_CHARS, DbRunner, Episode, PendingEvent, RunContext
from evaluation.harness.modes import mode_runner
from evaluation.harness.recorder import FinishedTrajectory, cache_lookup
from evaluation.harness.taskdata import TaskInput
from evaluation.sandbox import SandboxUnavailable
from store.blobs import BlobStore
from store.clock import utcnow
from store.storable import one_line, write_failure


class RunError(ValueError):
    """A run that cannot start (unknown benchmark/endpoint/mode, nothing to do); the message says why."""


@dataclass
class RunProgress:
    run_id: int
    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    running: int = 0
    tokens: int = 0
    api_calls: int = 0
    started: float = field(default_factory=time.monotonic)
    finished: bool = False
    status: str = "running"
    last_task_id: int | None = None
    last_status: str | None = None
    last_error: str | None = None
    halted: str | None = None  # why the run stopped by itself (an unreachable endpoint, a refused write), if it did
    halt_kind: str | None = None  # "endpoint", "store" or "process" (every harness process died)
    status_not_saved: str | None = None  # the run's final status could not be written (and why)
    procs: int = 1  # processes whose event loops ran the trajectories (1: this one's)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def completed(self) -> int:
        return self.done + self.failed

    @property
    def rate(self) -> float:
        """Trajectories finished per second in this session (skipped ones excluded)."""
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0

    def line(self) -> str:
        todo = self.total - self.skipped
        if self.halted:
            return f"run {self.run_id}: {'failed' if self.halt_kind == 'store' else 'stopped'}, {self.halted}"
        return (
            f"run {self.run_id}: {self.completed}/{todo} done={self.done} failed={self.failed} "
            f"running={self.running} skipped={self.skipped} tokens={self.tokens} calls={self.api_calls} "
            f"rate={self.rate:.2f}/s elapsed={self.elapsed:.1f}s"
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("started")
        d.update(elapsed=round(self.elapsed, 3), rate=round(self.rate, 4))
        return d


ProgressCallback = Callable[[RunProgress], None]
EventListener = Callable[[int, PendingEvent], None]


def _tool_set(name: str) -> Any:
    from evaluation.tools import get_tool_set

    try:
        return get_tool_set(name)
    except KeyError as exc:
        raise RunError(str(exc)) from exc


@dataclass
class _Head:
    """What building the client and the workers needs, as plain values (handed across threads)."""

    config: dict[str, Any]
    concurrency: int
    mode: str
    budgets: dict[str, Any]
    tool_set: str | None
    bench_settings: dict[str, Any]
    endpoint: Any  # EndpointSpec


SERVICE_THREADS_MAX = 128  # service-tool threads mostly wait on the network; threads start only when needed


async def model_client(head: _Head, db: DbRunner, read_pool: ThreadPoolExecutor, concurrency: int) -> ModelClient:
    """The run's model client, as its config asks (replay, retries); the TLS context is built on the
    read thread (loading the CA bundle takes a while) and only when the endpoint needs one."""
    cfg = head.config
    tls = None
    if needs_tls(head.endpoint.base_url) and not cfg.get("replay"):
        tls = await asyncio.get_running_loop().run_in_executor(read_pool, tls_context)
    return ModelClient(
        head.endpoint,
        replay=bool(cfg.get("replay")),
        cache_lookup=lambda key: db.call(cache_lookup, key),
        retry=RetryPolicy(**(cfg.get("retry") or {})),
        concurrency=concurrency,
        tls=tls,
    )


def build_context(
    run_id: int,
    head: _Head,
    engine: Engine,
    blobs: BlobStore,
    db: DbRunner,
    client: ModelClient,
    tool_pool: ThreadPoolExecutor,
    service_pool: ThreadPoolExecutor,
    listener: EventListener | None,
) -> RunContext:
    """What every trajectory of the run shares (one executor's, or one worker's)."""
    cfg = head.config
    return RunContext(
        run_id=run_id,
        mode=head.mode,
        engine=engine,
        blobs=blobs,
        db=db,
        client=client,
        budgets=Budgets.from_dict(head.budgets),
        tool_pool=tool_pool,
        service_pool=service_pool,
        tool_set_name=head.tool_set,
        tool_set=_tool_set(head.tool_set) if head.tool_set else None,
        tool_settings=_tool_settings(bool(cfg.get("replay")), bool(cfg.get("unsafe_in_process_sandbox"))),
        settings=head.bench_settings,
        max_reply_chars=int(cfg.get("max_reply_chars") or DEFAULT_MAX_REPLY_CHARS),
        sandbox=cfg.get("sandbox") or {},
        listener=listener,
        unsafe_in_process_sandbox=bool(cfg.get("unsafe_in_process_sandbox")),
    )


def _unreachable(item: FinishedTrajectory, client: Any) -> bool:
    """A trajectory failed because the endpoint could not be connected to, after its retries, and
    the endpoint has answered no call of this run session: the rest would fail the same way, one
    retry schedule at a time, so the run stops and the tasks not started stay pending for a resume."""
    return item.failure_kind == "connection" and client.answered == 0


def _tool_settings(replay: bool, unsafe_sandbox: bool = False) -> Any:
    from evaluation.tools import ToolSettings

    settings = ToolSettings.from_env()
    if replay:
        settings.replay_only = True
    settings.unsafe_in_process_sandbox = unsafe_sandbox
    return settings


async def _run_one(rc: RunContext, task: TaskInput, traj_id: int, state: RunProgress) -> FinishedTrajectory:
    """Run one trajectory to its end and return what its commit will write."""
    started_at = utcnow()
    ep = Episode(rc, task, traj_id)
    ep.live("starting")
    status, error, failure_kind = "done", None, None
    try:
        if task.missing:  # an input the model would need is gone: no model call is paid for
            raise TaskInputMissing("the task's input could not be read: " + "; ".join(task.missing))
        await mode_runner(rc.mode)(ep)
    except TaskInputMissing as exc:
        status, error, failure_kind = "failed", str(exc), "input"
        ep.recorder.error("input", str(exc))
    except BudgetExhausted as exc:
        ep.exhausted = exc.which
        ep.recorder.add("error", {"type": "budget", "message": str(exc)}, failed=False)
    except ModelCallError as exc:
        status, error, failure_kind = "failed", str(exc), exc.kind
        ep.recorder.error(exc.kind, str(exc), status=exc.status, attempts=exc.attempts)
    except EndpointError as exc:
        status, error = "failed", str(exc)
        ep.recorder.error("endpoint", str(exc))
    except SandboxUnavailable as exc:
        status, error = "failed", str(exc)
        ep.recorder.error("sandbox", str(exc))
    except asyncio.CancelledError:
        raise  # the trajectory stays "running" and is redone on resume
    except Exception as exc:  # a harness bug on one task must not stop the run
        if write_failure(exc):  # … but a store that refuses writes must (the runner stops)
            status, error, failure_kind = "failed", one_line(exc), "store"
        else:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
        ep.recorder.error("internal" if failure_kind != "store" else "store", error)
    finally:
        state.tokens += ep.usage.total_tokens
        state.api_calls += ep.usage.api_calls
    if status == "done" and ep.final_answer is None:  # nothing unanswered is called done
        status, error = (
            "failed",
            ep.failed_reason
            or (f"budget exhausted: {ep.exhausted}, no final answer" if ep.exhausted else "no final answer"),
        )
    usage = ep.usage.to_dict(ep.exhausted)
    return FinishedTrajectory(
        traj_id, ep.recorder, status, ep.final_answer, usage, error, ep.cache, task.revision, started_at, failure_kind
    )


class TaskInputMissing(Exception):
    """A task's input file (an image whose blob file was deleted) could not be read: that trajectory
    fails with the reason, and the run goes on (``--retry-failed`` redoes it once the file is back)."""
