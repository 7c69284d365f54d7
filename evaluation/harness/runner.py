"""Runs: create one, execute it (or resume it) with bounded concurrency, report progress.

``create_run`` validates everything a run needs and writes the Run row; ``execute_run`` is the one
code path for a first run and a resume: unfinished trajectories are reset (their partial events
deleted in the same transaction), finished ones are skipped, the rest are run by ``concurrency``
workers. Each trajectory is committed all-or-nothing shortly after it ends (trajectories ending close
together share a transaction, see ``committer``), so a kill at any moment loses only the trajectories
in flight or just finished, which a resume runs again. The CLI and the TUI both drive this module through the
``progress`` callback.

Its database work is SQLAlchemy Core over ``store.core_tables``, on a connection (the run's database
thread, the command line) or an ORM session (the TUI, tests): a run reaches its first model call
without building the SQLModel classes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evaluation.harness import prompts
from evaluation.harness.budgets import Budgets
from evaluation.harness.client import ModelClient, RetryPolicy, load_transport
from evaluation.harness.committer import GroupCommitter, StoreRefused
from evaluation.harness.endpoints import get_endpoint
from evaluation.harness.episode import DEFAULT_MAX_REPLY_CHARS
from store.heap import existing_objects_frozen
from evaluation.harness.livedb import BatchedLiveDb
from evaluation.harness.lease import run_lease
from evaluation.harness.modes import MODES
from evaluation.harness.procs import ProcPool, ProcsGone, auto_procs, can_fork, cpu_limit
from evaluation.harness.run_status import TASK_SET
from evaluation.harness.recorder import (
    FinishedTrajectory,
    ensure_trajectories,
    finished_task_ids,
    reset_unfinished,
)
from evaluation.harness.taskdata import TaskInput, load_tasks
from evaluation.harness.trajectory_run import (  # re-exported: the run's callers name them from here
    SERVICE_THREADS_MAX,
    EventListener,
    ProgressCallback,
    RunError,
    RunProgress,
    TaskInputMissing,  # noqa: F401  (re-exported)
    _Head,
    _run_one,
    _tool_set,
    _unreachable,
    build_context,  # noqa: F401  (re-exported)
    model_client,
)
from store.urls import without_password
from store import read_scope
from store import core_tables as t
from store.core_tables import Reader
from store.blobs import BlobStore
from store.clock import utcnow
from store.reserve import SpaceReserve
from store.storable import one_line, write_failure
from evaluation import vocab


MAX_LIMIT = vocab.MAX_LIMIT


@dataclass
class RunSpec:
    benchmark: str
    endpoint: str
    mode: str
    concurrency: int = 4
    limit: int | None = None
    budgets: Budgets = field(default_factory=Budgets)
    replay: bool = False
    name: str | None = None
    task_ids: list[int] | None = None
    status: str | None = None  # only tasks in this authoring status
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    sandbox: dict[str, Any] | None = None
    unsafe_in_process_sandbox: bool = False  # run model code even with no OS-level sandbox (recorded)


@dataclass(frozen=True)
class CreatedRun:
    """The run row ``create_run`` wrote: its id and what selects its tasks (``_task_ids``)."""

    id: int
    benchmark_id: int
    config: dict[str, Any]


def create_run(session: Reader, spec: RunSpec) -> CreatedRun:
    """Validate the spec against the database and write the Run row (status ``pending``), in the
    caller's transaction."""
    if spec.mode not in MODES:
        raise RunError(f"unknown mode {spec.mode!r}; modes: {', '.join(MODES)}")
    if spec.concurrency < 1:
        raise RunError("concurrency (-j) must be at least 1")
    if spec.limit is not None and (
        isinstance(spec.limit, bool) or not isinstance(spec.limit, int) or not 1 <= spec.limit <= MAX_LIMIT
    ):
        raise RunError(f"limit must be a whole number from 1 to {MAX_LIMIT} (got {spec.limit!r})")
    problems = spec.budgets.problems()
    if problems:
        raise RunError("; ".join(problems))
    b = t.benchmark.c
    bench = session.execute(sa.select(b.id, b.name, b.tool_set, b.settings).where(b.name == spec.benchmark)).first()
    if bench is None:
        known = ", ".join(session.execute(sa.select(b.name)).scalars()) or "none yet"
        raise RunError(f"no benchmark named {spec.benchmark!r} (known: {known})")
    endpoint = get_endpoint(session, spec.endpoint)
    if bench.tool_set:
        _tool_set(bench.tool_set)  # fail now, not in every trajectory
    if not spec.replay and endpoint.api_key_env:
        endpoint.api_key()  # raises EndpointError naming the variable
    _check_sandbox(spec.mode, bench.tool_set, spec.unsafe_in_process_sandbox)
    budgets = spec.budgets.for_mode(spec.mode)
    config = {
        "limit": spec.limit,
        "replay": spec.replay,
        "task_ids": spec.task_ids,
        "status": spec.status,
        "retry": asdict(spec.retry),
        "max_reply_chars": spec.max_reply_chars,
        "tool_set": bench.tool_set,
        "sandbox": spec.sandbox or {},
        "unsafe_in_process_sandbox": bool(spec.unsafe_in_process_sandbox),
        "endpoint": {"name": endpoint.name, "model": endpoint.model, "base_url": without_password(endpoint.base_url)},
    }
    row = {
        "name": spec.name,
        "benchmark_id": bench.id,
        "endpoint_id": endpoint.id,
        "kind": "model",
        "mode": spec.mode,
        "prompt_version": prompts.prompt_version(spec.mode, bench.settings or {}),
        "budgets": budgets.to_dict(),
        "concurrency": spec.concurrency,
        "status": "pending",
        "config": config,
        "created_at": utcnow(),
    }
    # The run is this set of tasks for good: a resume finishes it, tasks added to the benchmark later
    # are not part of it, and its progress counts these.
    config[TASK_SET] = _selected_task_ids(session, bench.id, config)
    if not config[TASK_SET]:
        raise RunError(
            f"benchmark {bench.name!r} has no tasks to run"
            + (" in that selection" if spec.task_ids or spec.status else "")
        )
    run_id = session.execute(sa.insert(t.run).values(**row).returning(t.run.c.id)).scalar_one()
    return CreatedRun(int(run_id), bench.id, config)


def _task_ids(session: Reader, run: Any) -> list[int]:
    """The ids of the tasks of the run (anything with its ``id``, ``benchmark_id`` and ``config``), in
    order: the set fixed when it was created, less tasks deleted since. A run stored before sets were
    kept is the tasks it made trajectories for once it started, else what its selection picks now."""
    cfg = run.config or {}
    task = t.task.c
    if TASK_SET in cfg:
        fixed = [int(i) for i in cfg[TASK_SET]]
        existing = {
            i
            for chunk in _chunks(fixed)
            for i in session.execute(sa.select(task.id).where(task.id.in_(chunk))).scalars()
        }
        return [i for i in fixed if i in existing]
    traj = t.trajectory.c
    started = sorted(session.execute(sa.select(traj.task_id).where(traj.run_id == run.id)).scalars())
    return started or _selected_task_ids(session, run.benchmark_id, cfg)


def _chunks(ids: list[int], size: int = 500) -> list[list[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _selected_task_ids(session: Reader, benchmark_id: int, cfg: dict[str, Any]) -> list[int]:
    """The tasks of the benchmark that the selection (``task_ids``, ``status``, ``limit``) picks now."""
    task = t.task.c
    stmt = sa.select(task.id).where(task.benchmark_id == benchmark_id)
    if cfg.get("task_ids"):
        stmt = stmt.where(task.id.in_(cfg["task_ids"]))
    if cfg.get("status"):
        stmt = stmt.where(task.status == cfg["status"])
    stmt = stmt.order_by(task.id)
    if cfg.get("limit"):
        stmt = stmt.limit(int(cfg["limit"]))
    return [i for i in session.execute(stmt).scalars() if i is not None]


@dataclass
class _Plan:
    todo: list[int]
    total: int
    skipped: int
    trajectories: dict[int, int]
    first_tasks: list[TaskInput]  # the first wave, read in the same transaction


FIRST_WAVE_MAX = 64


_HEAD = sa.select(
    *(t.run.c[n] for n in ("kind", "benchmark_id", "endpoint_id", "config", "concurrency", "mode", "budgets"))
)


def read_head(session: Reader, run_id: int) -> _Head:
    """The run's settings as plain values; ``RunError`` for a run that cannot be executed."""
    run = session.execute(_HEAD.where(t.run.c.id == run_id)).first()
    if run is None:
        raise RunError(f"no run with id {run_id}")
    if run.kind != "model":
        raise RunError(f"run {run_id} is a {run.kind} run; only model runs can be executed")
    b = t.benchmark.c
    bench = session.execute(sa.select(b.tool_set, b.settings).where(b.id == run.benchmark_id)).first()
    if run.endpoint_id is None:
        raise RunError(f"run {run_id} has no endpoint")
    head = _Head(
        dict(run.config or {}),
        run.concurrency,
        run.mode,
        dict(run.budgets or {}),
        bench.tool_set if bench else None,
        dict((bench.settings if bench else None) or {}),
        get_endpoint(session, run.endpoint_id),
    )
    problems = Budgets.from_dict(head.budgets).problems()
    if problems:  # a run stored before budgets were checked
        raise RunError(f"run {run_id} has invalid budgets: {'; '.join(problems)}")
    return head


def _prepare(session: Reader, run_id: int, retry_failed: bool, blobs: BlobStore, head_out: "Future[_Head]") -> _Plan:
    """Check the run and hand its settings to ``head_out`` at once (the loop builds the client
    meanwhile); then reset what a kill left unfinished, list what is left to do, make its trajectory
    rows, mark the run running and read the first wave of tasks."""
    try:
        head = read_head(session, run_id)
        if head.config.get("queue"):  # its trajectories belong to the workers' claims
            raise RunError(
                f"run {run_id} is queued for `chainmark worker`; run workers, or give it back to "
                f"the queue with: chainmark run --resume {run_id} --queue"
            )
    except BaseException as exc:
        head_out.set_exception(exc)
        raise
    head_out.set_result(head)
    r, traj = t.run.c, t.trajectory.c
    run = session.execute(sa.select(r.id, r.benchmark_id, r.config, r.started_at).where(r.id == run_id)).one()
    reset_unfinished(session, run_id)
    if retry_failed:
        session.execute(
            sa.update(t.trajectory).where(traj.run_id == run_id, traj.status == "failed").values(status="pending")
        )
        reset_unfinished(session, run_id)
    all_ids = _task_ids(session, run)
    finished = finished_task_ids(session, run_id)
    todo = [i for i in all_ids if i not in finished]
    trajectories = ensure_trajectories(session, run_id, todo)
    running: dict[str, Any] = {"status": "running", "finished_at": None}
    if run.started_at is None:
        running["started_at"] = utcnow()
    session.execute(sa.update(t.run).where(r.id == run_id).values(**running))
    first = load_tasks(session, blobs, todo[: min(head.concurrency, FIRST_WAVE_MAX)])
    return _Plan(todo, len(all_ids), len(all_ids) - len(todo), trajectories, first)


def _batches(ids: list[int], size: int) -> list[list[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _load_batch(engine: Engine, blobs: BlobStore, task_ids: list[int]) -> list[TaskInput]:
    with read_scope(engine) as conn:
        return load_tasks(conn, blobs, task_ids)


def _finish_run(session: Reader, run_id: int, status: str, reason: str | None = None) -> None:
    r, traj = t.run.c, t.trajectory.c
    run = session.execute(sa.select(r.config).where(r.id == run_id)).first()
    if run is not None:
        values: dict[str, Any] = {"status": status, "finished_at": utcnow() if status in ("done", "failed") else None}
        config = {k: v for k, v in (run.config or {}).items() if k != "stopped_because"}
        if reason:
            config["stopped_because"] = reason
        if config != (run.config or {}):
            values["config"] = config
        session.execute(sa.update(t.run).where(r.id == run_id).values(**values))
        if status != "done":  # nothing works on them now: a monitor must not show them as running
            session.execute(
                sa.update(t.trajectory).where(traj.run_id == run_id, traj.status == "running").values(status="pending")
            )


async def execute_run(
    engine: Engine,
    blobs: BlobStore,
    run_id: int,
    *,
    progress: ProgressCallback | None = None,
    listener: EventListener | None = None,
    stop: asyncio.Event | None = None,
    retry_failed: bool = False,
    actor: str | None = None,
    procs: int | None = 1,
) -> RunProgress:
    """Run (or resume) every task of the run that has no finished trajectory yet, as the run's only
    executor (``LeaseHeld`` if another live process has it; see ``lease.py``). ``procs`` above 1 runs
    the trajectories on that many child event loops (``procs.py``); None picks a number from -j."""
    n = _process_count(engine, run_id, procs)
    if n > 1:
        load_transport()  # once here, inherited by every child
    pool = ProcPool(n, engine, blobs) if n > 1 else None  # forked before any thread of the run starts
    try:
        with run_lease(engine, run_id), existing_objects_frozen():  # no full GC stalls the calls in flight
            return await _execute(engine, blobs, run_id, progress, listener, stop, retry_failed, actor, pool)
    finally:
        if pool is not None:
            pool.close()


def _process_count(engine: Engine, run_id: int, procs: int | None) -> int:
    """How many child processes run the trajectories: 1 (none, the loop here runs them) unless asked
    for or chosen by ``auto_procs``; at most the CPUs, -j, and for runs of model code the sandbox slots;
    1 wherever forking is not safe (another thread already runs, not Linux)."""
    if procs == 1 or not can_fork():
        return 1
    try:
        with read_scope(engine) as conn:
            head = read_head(conn, run_id)
    except Exception:  # the run cannot start: the run itself reports why
        return 1
    if head.config.get("queue"):
        return 1
    runs_code = runs_model_code(head.mode, head.tool_set)
    n = auto_procs(head.concurrency, runs_code) if procs is None else min(procs, cpu_limit(), head.concurrency)
    if runs_code:
        from evaluation.harness.sandbox import sandbox_slots

        n = min(n, sandbox_slots())
    return max(1, n)


async def _execute(
    engine: Engine,
    blobs: BlobStore,
    run_id: int,
    progress: ProgressCallback | None,
    listener: EventListener | None,
    stop: asyncio.Event | None,
    retry_failed: bool,
    actor: str | None,
    pool: ProcPool | None = None,
) -> RunProgress:
    reserve = SpaceReserve.beside(engine)  # freed before the final status write if the disk fills
    db_pool = ThreadPoolExecutor(1, thread_name_prefix="chainmark-db")
    read_pool = ThreadPoolExecutor(1, thread_name_prefix="chainmark-read")
    db = BatchedLiveDb(engine, db_pool, actor)  # monitor progress gathered: see livedb.py
    # One database job checks the run, hands its settings back at once, then prepares the
    # trajectories and reads the first wave while the client is built here.
    head_out: Future[_Head] = Future()
    preparing = db.submit(_prepare, run_id, retry_failed, blobs, head_out)
    try:
        head = await asyncio.wrap_future(head_out)
    except BaseException:  # the run cannot start (RunError, EndpointError): nothing was changed
        reserve.release()
        await _settle(preparing)  # the same error, raised here once
        read_pool.shutdown(wait=False)
        db_pool.shutdown(wait=False)
        raise
    state = RunProgress(run_id, procs=len(pool.children) if pool is not None else 1)
    tool_pool = ThreadPoolExecutor(max(1, min(4, head.concurrency)), thread_name_prefix="chainmark-tools")
    service_pool = ThreadPoolExecutor(
        max(1, min(SERVICE_THREADS_MAX, head.concurrency)), thread_name_prefix="chainmark-service"
    )
    client: ModelClient | None = None
    final_status = "running"
    try:
        run_task: Callable[[TaskInput, int], Awaitable[FinishedTrajectory]]
        answered: Any  # what has an ``answered`` count: the client, or the pool over its children's
        if pool is None:
            client = await model_client(head, db, read_pool, head.concurrency)
            rc = build_context(run_id, head, engine, blobs, db, client, tool_pool, service_pool, listener)
            run_task, answered = (lambda task, tid: _run_one(rc, task, tid, state)), client
        else:
            pool.start(
                {"run_id": run_id, "head": head, "concurrency": head.concurrency, "events": listener is not None},
                db,
                listener,
            )
            run_task, answered = (lambda task, tid: _run_remote(pool, task, tid, state)), pool
        plan: _Plan = await preparing
        state.total, state.skipped = plan.total, plan.skipped
        waves = _Waves(engine, blobs, plan, state, run_task, answered, db, head.concurrency, read_pool, progress, stop)
        if progress:
            progress(state)
        await waves.run()
        stopped = stop is not None and stop.is_set() and state.completed < len(plan.todo)
        final_status = "failed" if state.halted else "cancelled" if stopped else "done"
    except Exception as exc:  # the run broke (a task's image file gone, a bug): failed, with why, never "cancelled"
        final_status = "failed"
        state.halted = state.halted or f"the run stopped: {exc}"
        raise
    finally:
        state.status = final_status if final_status != "running" else "cancelled"
        try:
            await _settle(preparing)  # raised above if it mattered; retrieved so asyncio does not log it
            await _record_end(run_id, state, db, reserve)
        finally:
            reserve.release()
            if client is not None:
                await client.close()
            tool_pool.shutdown(wait=False, cancel_futures=True)
            service_pool.shutdown(wait=False, cancel_futures=True)
            read_pool.shutdown(wait=False, cancel_futures=True)
            db_pool.shutdown(wait=True)
    state.finished = True
    if progress:
        progress(state)
    return state


async def _settle(preparing: asyncio.Future[Any]) -> None:
    """Let the preparation end (the client could not be built, or the head failed) and retrieve its
    error, so asyncio does not log it."""
    if not preparing.done():
        await asyncio.wait([preparing])
    if not preparing.cancelled():
        preparing.exception()


async def _record_end(run_id: int, state: RunProgress, db: BatchedLiveDb, reserve: SpaceReserve) -> None:
    """Flush the live writes and store the run's final status; a database refusing the write makes
    the run failed, with why, rather than raising."""
    if state.halt_kind == "store":
        reserve.release()  # the space the status write needs on a full disk
    try:
        await db.close()
        await db.call(_finish_run, run_id, state.status, state.halted)
    except Exception as exc:
        if not write_failure(exc):
            raise
        state.status = "failed"
        state.status_not_saved = one_line(exc)
        if state.halted is None:
            state.halted, state.halt_kind = f"the database refused a write ({one_line(exc)})", "store"


class _Waves:
    """The run's tasks through ``-j`` workers: a producer reads them ahead in batches on the reader
    thread, workers run them and hand each finished one to the group committer. ``halt`` stops every
    worker (a store refusing writes, an unreachable endpoint, every child process gone)."""

    def __init__(
        self,
        engine: Engine,
        blobs: BlobStore,
        plan: _Plan,
        state: RunProgress,
        run_task: Callable[[TaskInput, int], Awaitable[FinishedTrajectory]],
        answered: Any,
        db: BatchedLiveDb,
        concurrency: int,
        read_pool: ThreadPoolExecutor,
        progress: ProgressCallback | None,
        stop: asyncio.Event | None,
    ) -> None:
        self.engine, self.blobs, self.plan, self.state = engine, blobs, plan, state
        self.run_task, self.answered, self.read_pool = run_task, answered, read_pool
        self.progress, self.stop, self.concurrency = progress, stop, concurrency
        self.halt = asyncio.Event()
        self.running: list[asyncio.Future[Any]] = []
        self.committer = GroupCommitter(db, batch=concurrency, on_refused=self.store_refused)
        self.queue: asyncio.Queue[TaskInput | None] = asyncio.Queue(maxsize=max(2 * concurrency, 16))
        self.workers = max(1, concurrency)

    def store_refused(self, reason: str) -> None:
        """The database takes no more writes: stop now, so no model call is paid for whose
        result cannot be kept. Trajectories in flight stay unfinished and are redone on resume."""
        if self.state.halt_kind != "store":
            self.state.halted, self.state.halt_kind = reason, "store"
        self.halt.set()
        for task in self.running:
            task.cancel()

    def _halt(self, why: str, kind: str) -> None:
        if not self.halt.is_set():
            self.state.halted, self.state.halt_kind = why, kind
            self.halt.set()

    def _stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    async def run(self) -> None:
        feeding = asyncio.ensure_future(self._produce())
        self.running.extend(asyncio.ensure_future(self._work()) for _ in range(self.workers))
        try:
            self._raise_unexpected(await asyncio.gather(*self.running, return_exceptions=True))
        finally:
            feeding.cancel()
            await self.committer.drain()

    def _raise_unexpected(self, results: list[Any]) -> None:
        """A worker cancelled by a refused write is expected; anything else is a bug (or a
        cancellation from outside, raised unless the store halted the run)."""
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result
        if self.state.halt_kind != "store":
            for result in results:
                if isinstance(result, asyncio.CancelledError):
                    raise result

    async def _produce(self) -> None:
        """Tasks are read in batches on a reader thread, ahead of the workers (the first wave came
        with the plan)."""
        plan, queue, loop = self.plan, self.queue, asyncio.get_running_loop()
        for task in plan.first_tasks:
            await queue.put(task)
        for chunk in _batches(plan.todo[len(plan.first_tasks) :], max(16, self.concurrency)):
            if self._stopping():
                break
            for task in await loop.run_in_executor(self.read_pool, _load_batch, self.engine, self.blobs, chunk):
                await queue.put(task)
        for _ in range(self.workers):
            await queue.put(None)

    async def _work(self) -> None:
        state, queue, halt, trajectories = self.state, self.queue, self.halt, self.plan.trajectories
        while True:
            task = await queue.get()
            if task is None or halt.is_set() or self._stopping():
                return
            state.running += 1
            try:
                item = await self.run_task(task, trajectories[task.id])
            except ProcsGone as exc:  # every child process died: the rest stays for a resume
                self._halt(str(exc), "process")
                return
            finally:
                state.running -= 1
            if item.failure_kind == "store":  # a blob or database write failed inside the trajectory
                self.store_refused(f"the database refused a write ({item.error})")
                return
            if _unreachable(item, self.answered):
                self._halt(f"the endpoint cannot be reached ({item.error})", "endpoint")
            self.committer.submit(item, self._on_committed(task.id, item))

    def _on_committed(self, task_id: int, item: FinishedTrajectory) -> Callable[[Exception | None], None]:
        state, progress = self.state, self.progress

        def done(exc: Exception | None) -> None:
            if isinstance(exc, StoreRefused):  # not saved: stays unfinished, redone on resume
                return
            status, error = (item.status, item.error) if exc is None else ("failed", f"commit failed: {exc}")
            if exc is None and status == "done":
                state.done += 1
            else:
                state.failed += 1
            state.last_task_id, state.last_status, state.last_error = task_id, status, error
            if progress:
                progress(state)

        return done


async def _run_remote(pool: ProcPool, task: TaskInput, traj_id: int, state: RunProgress) -> FinishedTrajectory:
    """``_run_one`` in one of the pool's child processes; its usage counts join this run's."""
    item, counts = await pool.run(task, traj_id)
    state.tokens += counts["tokens"]
    state.api_calls += counts["api_calls"]
    return item


def runs_model_code(mode: str, tool_set: str | None) -> bool:
    """Code mode runs the model's code; so does any executed tool implemented by the sandbox runner
    (GTA's Solver and Plot). Plan mode records tool calls without running them."""
    if mode == "code":
        return True
    if mode == "plan" or not tool_set:
        return False
    return any((t.impl or "").startswith("evaluation.tools.sandbox:") for t in _tool_set(tool_set).tools.values())


def _check_sandbox(mode: str, tool_set: str | None, unsafe: bool) -> None:
    """Refuse, before anything runs, a run that would execute model code with no OS-level sandbox."""
    if unsafe or not runs_model_code(mode, tool_set):
        return
    from evaluation.sandbox import find_backend
    from evaluation.sandbox.backend import NO_BACKEND_HELP

    backend, why = find_backend()
    if backend is None:
        raise RunError(
            f"this run executes model-written code and there is no OS-level sandbox ({why}); {NO_BACKEND_HELP}"
        )


def run_blocking(engine: Engine, blobs: BlobStore, run_id: int, **kwargs: Any) -> RunProgress:
    return asyncio.run(execute_run(engine, blobs, run_id, **kwargs))


def start_run(
    engine: Engine, blobs: BlobStore, spec: RunSpec, *, actor: str | None = None, **kwargs: Any
) -> RunProgress:
    """Create and execute a run in one call (for scripts and tests)."""
    with engine.begin() as conn:
        run_id = create_run(conn, spec).id
    return run_blocking(engine, blobs, run_id, actor=actor, **kwargs)
