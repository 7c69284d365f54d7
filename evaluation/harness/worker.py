"""``chainmark worker``: claim trajectories of queued runs and run them with the harness, beside any
number of other workers on any hosts (see ``workqueue`` for the claims and why they are ours).

A worker process has one token. It works on one run at a time: it builds that run's client and
context once, claims a few trajectories at a time (a small prefetch, so no worker hoards work),
runs them ``-j`` at once exactly as ``chainmark run`` does, and commits them through the claim fence.
A heartbeat thread renews its claims and reads the statuses of the runs it works on: a cancelled
run makes it stop claiming, finish what is running and give the rest back. When a run has nothing
left it can claim, the worker moves on to the next queued run, or waits for one (``--until-empty``:
exits once every selected run is finished or no longer takes workers).

The same worker also judges: items queued by ``chainmark judge … --queue`` are claimed under the same
token and lease (``evaluation.judges.worker``) once no run has trajectories it can claim; ``runs`` and
``judges`` in the options turn either half off.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from evaluation.harness import workqueue as wq
from evaluation.harness.client import ModelClient
from evaluation.harness.committer import GroupCommitter, StoreRefused
from store.heap import existing_objects_frozen
from evaluation.harness.livedb import BatchedLiveDb
from evaluation.harness.recorder import FinishedTrajectory
from evaluation.harness.runner import _load_batch, read_head
from evaluation.harness.trajectory_run import (
    SERVICE_THREADS_MAX,
    RunProgress,
    _Head,
    _run_one,
    _unreachable,
    build_context,
    model_client,
)
from evaluation.harness.taskdata import TaskInput
from evaluation.judges import queue as jq
from evaluation.judges.worker import JudgeTally, work_on_judges
from store import read_only, session_scope
from store.blobs import BlobStore


@dataclass
class WorkerOptions:
    concurrency: int = 4
    run_ids: list[int] | None = None  # only these runs (default: every queued run)
    until_empty: bool = False
    ttl: float = 60.0  # seconds a claim lives without a heartbeat
    poll: float = 1.0  # seconds between looks for claimable work when there is none
    runs: bool = True  # claim trajectories of queued runs
    judges: bool = True  # claim queued judge items


@dataclass
class WorkerReport:
    token: str
    runs: dict[int, RunProgress] = field(default_factory=dict)
    lost: int = 0  # trajectories finished here but taken over meanwhile (not written)
    stopped: dict[int, str] = field(default_factory=dict)  # run id → why this worker left it early
    judging: JudgeTally = field(default_factory=JudgeTally)

    @property
    def done(self) -> int:
        return sum(p.done for p in self.runs.values())

    @property
    def failed(self) -> int:
        return sum(p.failed for p in self.runs.values())


Progress = Callable[[RunProgress], None]


class _Heartbeat:
    """Renews the token's claims every ttl / 4 from a thread, on its own connection, and notes
    which of the runs being worked on no longer take workers (cancelled, …)."""

    def __init__(self, engine: Engine, token: str, ttl: float):
        self.engine, self.token, self.ttl = engine, token, ttl
        self.runs: dict[int, Callable[[str], None]] = {}  # run id → called with its status when it stops
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="chainmark-worker-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            try:
                with session_scope(self.engine) as s:
                    statuses = wq.renew(s, self.token, self.ttl, list(self.runs))
                    jq.renew(s, self.token, self.ttl)
            except Exception:  # noqa: BLE001, S112 - a busy or restarting database: next beat
                continue
            for run_id, status in statuses.items():
                notify = self.runs.get(run_id)
                if status not in wq.CLAIMABLE and notify is not None:
                    notify(status)


async def work(
    engine: Engine,
    blobs: BlobStore,
    options: WorkerOptions,
    *,
    progress: Progress | None = None,
    stop: asyncio.Event | None = None,
    actor: str | None = None,
    judge_progress: Callable[[JudgeTally], None] | None = None,
) -> WorkerReport:
    """Claim and run queued trajectories and judge items until ``stop`` (or, with ``until_empty``,
    until nothing is left); gives back whatever it holds when it ends."""
    wq.require_postgres(engine)
    report = WorkerReport(uuid.uuid4().hex)
    stop = stop or asyncio.Event()
    beat = _Heartbeat(engine, report.token, options.ttl)
    beat.start()
    skip: set[int] = set()  # runs this worker stopped on (unreachable endpoint, refused writes)
    try:
        with existing_objects_frozen():
            while not stop.is_set():
                runs: list[int] = []
                ready: list[int] = []
                judge_open = judge_free = 0
                with session_scope(read_only(engine)) as s:
                    if options.runs:
                        runs = [r for r in wq.queued_runs(s, options.run_ids) if r not in skip]
                        ready = [r for r in runs if wq.claimable(s, r) > 0]
                    if options.judges:
                        judge_open = jq.open_items(s, options.run_ids)
                        judge_free = jq.claimable(s, options.run_ids) if judge_open else 0
                if options.until_empty and not runs and not judge_open:
                    break
                for run_id in ready:
                    if stop.is_set():
                        break
                    why = await _work_on_run(engine, blobs, run_id, report, options, beat, progress, stop, actor)
                    if why:
                        report.stopped[run_id] = why
                        skip.add(run_id)
                if judge_free and not stop.is_set():
                    await work_on_judges(
                        engine,
                        blobs,
                        report.token,
                        report.judging,
                        concurrency=options.concurrency,
                        ttl=options.ttl,
                        run_ids=options.run_ids,
                        stop=stop,
                        actor=actor,
                        progress=judge_progress,
                    )
                if not ready and not judge_free:
                    try:
                        await asyncio.wait_for(stop.wait(), options.poll)
                    except TimeoutError:
                        pass
    finally:
        beat.stop()
        try:
            with session_scope(engine) as s:
                wq.release(s, report.token)
                jq.release(s, report.token)
        except Exception:  # noqa: BLE001 - the claims expire by themselves
            pass
    return report


async def _work_on_run(
    engine: Engine,
    blobs: BlobStore,
    run_id: int,
    report: WorkerReport,
    options: WorkerOptions,
    beat: _Heartbeat,
    progress: Progress | None,
    stop: asyncio.Event,
    actor: str | None,
) -> str | None:
    """Claim and run the run's trajectories until none is left to claim. Returns why this worker
    should not come back to the run (an endpoint it cannot reach, a store refusing writes), or None."""
    j = options.concurrency
    db_pool = ThreadPoolExecutor(1, thread_name_prefix="chainmark-db")
    read_pool = ThreadPoolExecutor(1, thread_name_prefix="chainmark-read")
    claim_pool = ThreadPoolExecutor(1, thread_name_prefix="chainmark-claim")  # not queued behind commits
    tool_pool = ThreadPoolExecutor(max(1, min(4, j)), thread_name_prefix="chainmark-tools")
    service_pool = ThreadPoolExecutor(max(1, min(SERVICE_THREADS_MAX, j)), thread_name_prefix="chainmark-service")
    db = BatchedLiveDb(engine, db_pool, actor, own_thread=True)
    state = report.runs.setdefault(run_id, RunProgress(run_id))
    state.finished, state.status = False, "running"
    work = _RunWork(engine, blobs, run_id, report, options, state, progress, stop, actor, claim_pool)
    client: ModelClient | None = None
    beat.runs[run_id] = work.stopped_elsewhere
    try:
        try:
            head: _Head = await db.call(read_head, run_id)
        except Exception as exc:  # noqa: BLE001 - a run that cannot be executed: leave it, say why
            return f"{type(exc).__name__}: {exc}"
        client = await model_client(head, db, read_pool, j)
        rc = build_context(run_id, head, engine, blobs, db, client, tool_pool, service_pool, None)
        return await work.run(rc, client, db)
    finally:
        beat.runs.pop(run_id, None)
        state.finished = True
        if progress:
            progress(state)
        if client is not None:
            await client.close()
        await db.close()
        tool_pool.shutdown(wait=False, cancel_futures=True)
        service_pool.shutdown(wait=False, cancel_futures=True)
        read_pool.shutdown(wait=False, cancel_futures=True)
        claim_pool.shutdown(wait=True)
        db_pool.shutdown(wait=True)


class _RunWork:
    """One run on this worker: a claim loop keeps ``-j`` runners fed (claiming a wave ahead), runners
    run trajectories and hand them to the fenced committer, and on the way out the claims not run
    are given back. ``leave`` is set when the run was cancelled elsewhere or this worker cannot go on
    with it (``halted`` says why)."""

    def __init__(
        self,
        engine: Engine,
        blobs: BlobStore,
        run_id: int,
        report: WorkerReport,
        options: WorkerOptions,
        state: RunProgress,
        progress: Progress | None,
        stop: asyncio.Event,
        actor: str | None,
        claim_pool: ThreadPoolExecutor,
    ) -> None:
        self.engine, self.blobs, self.run_id, self.report, self.options = engine, blobs, run_id, report, options
        self.state, self.progress, self.stop, self.actor, self.claim_pool = state, progress, stop, actor, claim_pool
        self.loop = asyncio.get_running_loop()
        self.leave = asyncio.Event()
        self.halted: list[str] = []
        self.fenced = wq.Fenced(report.token, run_id)
        self.queue: asyncio.Queue[tuple[TaskInput, int] | None] = asyncio.Queue()
        self.taken = asyncio.Event()  # a runner took a task off the queue, or finished one
        self.claimed: set[int] = set()  # trajectory ids claimed and not handed to the committer
        self.busy = 0
        self.committer: GroupCommitter | None = None

    def stopped_elsewhere(self, status: str) -> None:
        """The heartbeat saw the run cancelled (called on its thread)."""
        self.loop.call_soon_threadsafe(self.leave.set)

    def refused(self, reason: str) -> None:
        self.halted.append(reason)
        self.leave.set()

    async def run(self, rc: Any, client: ModelClient, db: BatchedLiveDb) -> str | None:
        """Work until nothing is left to claim or the worker must leave; why it left early, or None."""
        self.committer = GroupCommitter(
            db,
            batch=self.options.concurrency,
            on_refused=self.refused,
            commit=self.fenced.commit,
            mark=self.fenced.mark,
        )
        runners = [asyncio.ensure_future(self._runner(rc, client)) for _ in range(self.options.concurrency)]
        try:
            await self._claim_until_done()
        finally:
            await self._wind_down(runners, db)
        self._settle_status()
        return self.halted[0] if self.halted else None

    async def _claim_until_done(self) -> None:
        """Claim so that ``-j`` run and a wave more wait (``run`` reads tasks ahead the same way)."""
        j = prefetch = self.options.concurrency
        queue = self.queue
        while not (self.leave.is_set() or self.stop.is_set()):
            self.taken.clear()  # before looking, so a change after the look wakes the wait below
            want = j + prefetch - self.busy - queue.qsize()
            if want < prefetch and queue.qsize() > 0:
                await _either(self.taken, self.leave, self.stop)
                continue
            got = await self._claim(max(1, want))
            if got is None:  # cancelled, or finished by others
                break
            if not got:
                if self.busy == 0 and queue.qsize() == 0:
                    break
                await _either(self.taken, self.leave, self.stop)
                continue
            for task, traj_id, attempt in got:
                self.claimed.add(traj_id)
                self.fenced.attempts[traj_id] = attempt
                queue.put_nowait((task, traj_id))

    async def _claim(self, n: int) -> list[tuple[TaskInput, int, int]] | None:
        return await self.loop.run_in_executor(
            self.claim_pool,
            _claim_and_load,
            self.engine,
            self.blobs,
            self.run_id,
            self.report.token,
            n,
            self.options.ttl,
            self.actor,
        )

    async def _runner(self, rc: Any, client: ModelClient) -> None:
        state, queue = self.state, self.queue
        while True:
            got = await queue.get()
            self.taken.set()
            if got is None:
                return
            if self.leave.is_set() or self.stop.is_set():
                continue  # given back by _wind_down
            task, traj_id = got
            self.busy += 1
            state.running += 1
            try:
                item = await _run_one(rc, task, traj_id, state)
            finally:
                self.busy -= 1
                state.running -= 1
                self.taken.set()
            if item.failure_kind == "store":
                self.refused(f"the database refused a write ({item.error})")
                continue
            if _unreachable(item, client):
                self.halted.append(f"the endpoint cannot be reached ({item.error})")
                self.leave.set()
                continue  # not committed: the claim is given back, another worker may reach it
            self.claimed.discard(traj_id)
            assert self.committer is not None
            self.committer.submit(item, self._on_committed(item))

    def _on_committed(self, item: FinishedTrajectory) -> Callable[[Exception | None], None]:
        def done(exc: Exception | None) -> None:
            if isinstance(exc, StoreRefused) or item.trajectory_id in self.fenced.lost:
                return
            state = self.state
            if exc is None and item.status == "done":
                state.done += 1
            else:
                state.failed += 1
            state.last_status, state.last_error = item.status, item.error
            if self.progress:
                self.progress(state)

        return done

    async def _wind_down(self, runners: list[asyncio.Task[None]], db: BatchedLiveDb) -> None:
        """Stop the runners, commit what they finished, give back the claims not run."""
        for _ in runners:
            self.queue.put_nowait(None)
        results = await asyncio.gather(*runners, return_exceptions=True)
        assert self.committer is not None
        await self.committer.drain()
        unrun = self.claimed - self.fenced.lost
        if unrun:
            try:
                await db.call(wq.release, self.report.token, sorted(self.claimed))
            except Exception:  # noqa: BLE001 - they expire by themselves
                pass
        self.report.lost += len(self.fenced.lost)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result

    def _settle_status(self) -> None:
        """Left because the run stopped elsewhere: its status as stored; otherwise ours."""
        state = self.state
        if self.leave.is_set() and not self.halted:
            with session_scope(read_only(self.engine)) as s:
                state.status = wq.run_status(s, self.run_id) or "gone"
        else:
            state.status = "failed" if self.halted else "done"
        state.halted = self.halted[0] if self.halted else None


def _claim_and_load(
    engine: Engine, blobs: BlobStore, run_id: int, token: str, n: int, ttl: float, actor: str | None
) -> list[tuple[TaskInput, int, int]] | None:
    """Claim up to ``n`` trajectories (one short transaction) and read their tasks:
    [(task, trajectory id, attempt)]."""
    with session_scope(engine, actor) as s:
        got = wq.claim(s, run_id, token, n, ttl)
    if not got:
        return None if got is None else []
    by_task = {task_id: (traj_id, attempt) for traj_id, task_id, attempt in got}
    return [(task, *by_task[task.id]) for task in _load_batch(engine, blobs, list(by_task))]


async def _either(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


def work_blocking(engine: Engine, blobs: BlobStore, options: WorkerOptions, **kwargs: Any) -> WorkerReport:
    return asyncio.run(work(engine, blobs, options, **kwargs))
