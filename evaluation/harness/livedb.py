"""The run's database thread with per-step progress reports gathered: newest per trajectory, written
together once per ``every`` seconds.

Each report alone is a transaction: at -j 256 two a trajectory cost the database thread more than
the commits themselves (about 1 ms of Python each on SQLite, bench_harness), and on PostgreSQL
hundreds of them a second queued the trajectories' commits behind them (bench_workers: a 400-task
run committed 2 s after its last trajectory ended). A monitor sees a step at most ``every`` late;
a report written after the trajectory's commit changes nothing (``write_live`` touches only
unfinished rows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from sqlalchemy.engine import Engine

from evaluation.harness.episode import DbRunner
from evaluation.harness.live import write_live, write_live_many


class BatchedLiveDb(DbRunner):
    """``DbRunner`` whose ``write_live`` calls are gathered. With ``own_thread`` the batches are
    written from a thread of their own (PostgreSQL: they need not wait behind commits); without, on
    the run's database thread (SQLite: one writer, the run's writes never contend with each other)."""

    def __init__(
        self, engine: Engine, executor: Executor, actor: str | None, every: float = 0.25, *, own_thread: bool = False
    ):
        super().__init__(engine, executor, actor)
        self.every = every
        self.pending: dict[int, dict[str, Any]] = {}
        self.pool: ThreadPoolExecutor | None = (
            ThreadPoolExecutor(1, thread_name_prefix="chainmark-live") if own_thread else None
        )
        self.flushing: asyncio.Future[None] | None = None
        self.closed = False

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> "asyncio.Future[Any]":
        if fn is not write_live:
            return super().submit(fn, *args, **kwargs)
        trajectory_id, usage = args
        self.report(trajectory_id, usage)
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def report(self, trajectory_id: int, usage: dict[str, Any]) -> None:
        """Keep the newest report of the trajectory for the next batch (the start time the first one
        sets is kept)."""
        if self.closed:
            return
        earlier = self.pending.get(trajectory_id)
        if earlier is not None and (earlier.get("step") == "starting" or earlier.get("_started")):
            usage = {**usage, "_started": True}
        self.pending[trajectory_id] = usage
        if self.flushing is None or self.flushing.done():
            self.flushing = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        await asyncio.sleep(self.every)
        batch, self.pending = self.pending, {}
        if batch:
            try:
                await asyncio.get_running_loop().run_in_executor(self.pool or self.executor, self._write, batch)
            except Exception:  # noqa: BLE001, S110 - progress is a courtesy, not a record
                pass

    def _write(self, batch: dict[int, dict[str, Any]]) -> None:
        with self.engine.begin() as conn:
            write_live_many(conn, batch)

    async def close(self) -> None:
        """Write what is gathered now and take no more reports (before the database thread stops)."""
        self.closed = True
        if self.flushing is not None and not self.flushing.done():
            self.flushing.cancel()
            await asyncio.wait([self.flushing])
        batch, self.pending = self.pending, {}
        if batch:
            try:
                await asyncio.get_running_loop().run_in_executor(self.pool or self.executor, self._write, batch)
            except Exception:  # noqa: BLE001, S110
                pass
        if self.pool is not None:
            self.pool.shutdown(wait=True)
