"""Group commits of finished trajectories, written by the run's database thread in the background.

Workers hand a finished trajectory over and go on with the next task; they never wait for a commit.
Trajectories that finish close together go into one transaction: a commit has a fixed cost of about
a millisecond of Python on the database thread, which shares the GIL with the event loop, so one
commit per trajectory slowed the model calls in flight (bench_harness: ~200 commits for 500
trajectories at -j 32 before gathering, ~20 after). A trajectory stays uncommitted for at most
``gather_s``; a kill in that window only means it is run again on resume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from evaluation.harness.episode import DbRunner
from evaluation.harness.recorder import FinishedTrajectory, commit_many

Done = Callable[[Exception | None], None]


class GroupCommitter:
    """``submit`` queues a trajectory; the flusher commits what is queued once ``batch`` items wait
    or ``gather_s`` has passed since the first of them; ``drain`` commits the rest at once."""

    def __init__(self, db: DbRunner, *, batch: int = 32, gather_s: float = 0.05):
        self.db, self.batch, self.gather_s = db, max(1, batch), gather_s
        self.pending: list[tuple[FinishedTrajectory, Done]] = []
        self.flusher: asyncio.Future[None] | None = None
        self._full = asyncio.Event()
        self._draining = False

    def submit(self, item: FinishedTrajectory, done: Done) -> None:
        self.pending.append((item, done))
        if len(self.pending) >= self.batch:
            self._full.set()
        if self.flusher is None or self.flusher.done():
            self.flusher = asyncio.ensure_future(self._flush())

    async def drain(self) -> None:
        self._draining = True
        self._full.set()
        while self.flusher is not None and not self.flusher.done():
            await asyncio.shield(self.flusher)

    async def _gather(self) -> None:
        if self._draining or len(self.pending) >= self.batch:
            return
        self._full.clear()
        try:
            await asyncio.wait_for(self._full.wait(), self.gather_s)
        except TimeoutError:
            pass

    async def _flush(self) -> None:
        while self.pending:
            await self._gather()
            batch, self.pending = self.pending, []
            try:
                await self.db.call(commit_many, [item for item, _ in batch])
                for _, done in batch:
                    done(None)
            except Exception:  # one bad item must not sink the others: retry them one by one
                for item, done in batch:
                    try:
                        await self.db.call(commit_many, [item])
                        done(None)
                    except Exception as exc:
                        done(exc)
