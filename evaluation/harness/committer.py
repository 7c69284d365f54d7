"""Group commits of finished trajectories, written by the run's database thread in the background.

Workers hand a finished trajectory over and go on with the next task; they never wait for a commit.
Trajectories that finish close together go into one transaction: a commit has a fixed cost of about
a millisecond of Python on the database thread, which shares the GIL with the event loop, so one
commit per trajectory slowed the model calls in flight (bench_harness: ~200 commits for 500
trajectories at -j 32 before gathering, ~20 after). A trajectory stays uncommitted for at most
``gather_s``; a kill in that window only means it is run again on resume.

A trajectory whose text the database refuses (a lone surrogate, NUL on PostgreSQL, a value JSON
cannot encode) is stored escaped with a note, or failing that marked ``failed`` with the reason. A
write the store refuses as a whole (disk full, read-only, lock held past the busy timeout) is not a
problem of one trajectory: the committer stops taking work and tells the run through ``on_refused``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from evaluation.harness.episode import DbRunner
from evaluation.harness.recorder import FinishedTrajectory, commit_many, escaped_copy, mark_unstorable
from store.dialects import is_postgresql
from store.storable import one_line, write_failure

Done = Callable[[Exception | None], None]


class StoreRefused(Exception):
    """The database (or blob store) refused a write; nothing more of the run can be saved."""


class GroupCommitter:
    """``submit`` queues a trajectory; the flusher commits what is queued once ``batch`` items wait
    or ``gather_s`` has passed since the first of them; ``drain`` commits the rest at once."""

    def __init__(
        self,
        db: DbRunner,
        *,
        batch: int = 32,
        gather_s: float = 0.05,
        on_refused: Callable[[str], None] | None = None,
        commit: Callable[..., None] | None = None,
        mark: Callable[..., None] | None = None,
    ):
        self.db, self.batch, self.gather_s = db, max(1, batch), gather_s
        self._commit, self._mark = commit, mark  # queued runs pass claim-fenced ones (workqueue.Fenced)
        self.on_refused = on_refused
        self.refused: str | None = None  # why the store refused a write, once it has
        self.pending: list[tuple[FinishedTrajectory, Done]] = []
        self.flusher: asyncio.Future[None] | None = None
        self._full = asyncio.Event()
        self._draining = False

    def submit(self, item: FinishedTrajectory, done: Done) -> None:
        if self.refused is not None:
            done(StoreRefused(self.refused))
            return
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
            if self.refused is not None:
                self._refuse(None, batch)
                continue
            try:
                await self.db.call(self._commit or commit_many, [item for item, _ in batch])
            except Exception as exc:
                if write_failure(exc):
                    self._refuse(exc, batch)
                    continue
            else:
                for _, done in batch:
                    done(None)
                continue
            for n, (item, done) in enumerate(batch):  # one bad item must not sink the others
                try:
                    result = await self._commit_alone(item)
                except Exception as exc:
                    if write_failure(exc):
                        self._refuse(exc, batch[n:])
                        break
                    result = exc  # not even the failure could be written: the run counts it failed
                done(result)

    async def _commit_alone(self, item: FinishedTrajectory) -> Exception | None:
        """Commit one trajectory; if the database refuses its content, commit it escaped; if even
        that fails, mark it failed with the reason. Returns the error that made it failed, if any;
        raises what ``write_failure`` says is the store's refusal."""
        try:
            await self.db.call(self._commit or commit_many, [item])
            return None
        except Exception as exc:
            if write_failure(exc):
                raise
            first = exc
        nul = is_postgresql(self.db.dialect)
        try:
            await self.db.call(self._commit or commit_many, [escaped_copy(item, nul=nul, why=one_line(first))])
            return None
        except Exception as exc:
            if write_failure(exc):
                raise
        reason = f"the trajectory could not be stored: {type(first).__name__}: {one_line(first)}"
        await self.db.call(self._mark or mark_unstorable, item.trajectory_id, reason)
        return RuntimeError(reason)

    def _refuse(self, exc: Exception | None, items: list[tuple[FinishedTrajectory, Done]]) -> None:
        if self.refused is None and exc is not None:
            self.refused = f"the database refused a write ({one_line(exc)})"
            if self.on_refused is not None:
                self.on_refused(self.refused)
        for _, done in items + self.pending:
            done(StoreRefused(self.refused or "the database refused a write"))
        self.pending = []
