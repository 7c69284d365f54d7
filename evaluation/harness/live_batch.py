"""The run's database thread with its progress reports (``live.write_live``) coalesced.

Each report alone was a transaction of its own: two or more per trajectory (1,000 for 500 one-call
tasks), about 2 ms of Python each on the database thread, which shares the GIL with the event loop
and queued the trajectories' commits behind the reports (the last wave's commit then waited for the
backlog before the process could exit). Here reports wait in a dict, newest per trajectory, and one
job on the same thread writes all that are waiting in one transaction: a monitor sees the same
numbers, no later than the reports queued one by one would have reached the database.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from evaluation.harness.episode import DbRunner
from evaluation.harness.live import write_live, write_live_many


class LiveBatchingDb(DbRunner):
    def __init__(self, engine: Engine, executor: Executor, actor: str | None = None):
        super().__init__(engine, executor, actor)
        self._lock = threading.Lock()  # the loop adds reports while the database thread takes them
        self._pending: dict[int, dict[str, Any]] = {}
        self._queued = False

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> "asyncio.Future[Any]":
        if fn is not write_live:
            return super().submit(fn, *args, **kwargs)
        trajectory_id, usage = args
        with self._lock:
            earlier = self._pending.get(trajectory_id)
            if earlier is not None and (earlier.get("step") == "starting" or earlier.get("_started")):
                usage = {**usage, "_started": True}  # the start time the first report sets is kept
            self._pending[trajectory_id] = usage
            queue, self._queued = not self._queued, True
        if queue:
            return super().submit(self._write)
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result(None)  # carried by the write already queued
        return done

    def _write(self, session: Session) -> None:
        with self._lock:
            batch, self._pending, self._queued = self._pending, {}, False
        write_live_many(session, batch)
