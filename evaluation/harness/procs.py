"""Several event loops for one run: the trajectories run in child processes, the parent keeps the database.

One event loop saturates one core at roughly 700 model calls a second, most of it inside the openai
client stack; at -j 256 against a fast endpoint the calls then queue behind the loop. With ``procs``
above 1 the run forks that many children before its loop starts (fork, so no child pays the imports
again). The parent stays the run's only executor and only database writer: it reads and prepares the
tasks, hands each trajectory to the least busy child over a pipe, and commits what comes back
through the same group committer as a single-process run. A child builds its own model client and
runs ``_run_one`` on its own loop; every database call an episode makes (monitor progress, images it
stores, replay-cache look-ups) goes to the parent as a message and runs on the parent's database
thread, so no transaction is ever held across a model or tool call and nothing new can be written
half. Service tools, which read and write the replay cache around their network call in short
transactions of their own, use the child's own connections.

Guarantees carry over because a trajectory is still committed whole, by the parent, after it ends:
a child killed mid-run loses only its trajectories in flight, which the parent hands to another
child (they were never committed, so nothing is written twice); when no child is left the run stops
as failed and ``--resume`` redoes the unfinished ones. A parent killed outright closes the pipes,
and each child exits on end of file. Children ignore SIGINT: Ctrl-C reaches the parent, which ends
them. Sandboxed code is capped by CPU count over the whole run: each child gets its share of the
slots.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import math
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from evaluation.harness.live import write_live
from store.blobs import BlobStore
from store.dialects import name_of
from store.speedups import enabled

if TYPE_CHECKING:  # multiprocessing loads only when a run forks children (ProcPool): most runs never do
    from multiprocessing.connection import Connection

PER_LOOP = 128  # trajectories in flight one event loop keeps up with at sub-second latency
_EXIT = ("exit",)


class ChildLost(Exception):
    """The child process running a trajectory ended before it answered."""


class ProcsGone(Exception):
    """No child process is left to run trajectories."""


def cpu_limit() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Forking is safe only from a process with one thread (a thread holding a lock at fork time
    leaves it held forever in the child) and where fork is the platform's own (Linux)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def auto_procs(concurrency: int, runs_code: bool = False) -> int:
    """Child processes for a run of ``concurrency`` when the user did not say: one loop up to
    ``PER_LOOP`` in flight, then one per ``PER_LOOP``, never more than the CPUs. Runs that execute
    model code stay in one process (their sandboxes, not the loop, take the cores)."""
    if runs_code or concurrency <= PER_LOOP or not enabled("harness_procs"):
        return 1
    return max(1, min(cpu_limit(), math.ceil(concurrency / PER_LOOP)))


class _Outbox:
    """Messages to one pipe, sent as one list per loop turn (one write, one wake-up at the other end)."""

    def __init__(
        self,
        conn: Connection,
        loop: asyncio.AbstractEventLoop,
        on_broken: Callable[[], None],
        on_unsendable: Callable[[Any, Exception], None] | None = None,
    ):
        self.conn, self.loop, self.on_broken, self.on_unsendable = conn, loop, on_broken, on_unsendable
        self.items: list[Any] = []
        self.closed = False

    def put(self, msg: Any) -> None:
        if self.closed:
            return
        if not self.items:
            self.loop.call_soon(self.flush)
        self.items.append(msg)

    def flush(self) -> None:
        items, self.items = self.items, []
        if not items or self.closed:
            return
        try:
            self.conn.send(items)
        except (OSError, ValueError):
            self._broken()
        except Exception:  # one message does not pickle: send the rest one by one, report that one
            for msg in items:
                try:
                    self.conn.send([msg])
                except (OSError, ValueError):
                    self._broken()
                    return
                except Exception as exc:
                    if self.on_unsendable is None:
                        self._broken()
                        return
                    self.on_unsendable(msg, exc)

    def _broken(self) -> None:
        if not self.closed:
            self.closed = True
            self.on_broken()


def _read(conn: Connection, loop: asyncio.AbstractEventLoop, deliver: Callable[[Any], None]) -> None:
    """Reader thread: each list received is handed to the loop; ``None`` at end of file."""
    while True:
        try:
            items = conn.recv()
        except (EOFError, OSError):
            items = None
        except Exception as exc:  # a message that cannot be unpickled: the peer is unusable
            items = None
            print(f"chainmark: harness process message lost: {exc!r}", file=sys.stderr)
        try:
            loop.call_soon_threadsafe(deliver, items)
        except RuntimeError:  # the loop is closed
            return
        if items is None:
            return


# ---------------------------------------------------------------------------------------- parent


class _Child:
    def __init__(self, process: Any, conn: Connection):
        self.process, self.conn = process, conn
        self.inflight: dict[int, asyncio.Future[Any]] = {}
        self.alive = True
        self.out: _Outbox | None = None


class ProcPool:
    """The parent's side: ``n`` forked children, each running trajectories on its own loop."""

    def __init__(self, n: int, engine: Engine, blobs: BlobStore):
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        self.engine, self.blobs = engine, blobs
        self.children: list[_Child] = []
        self.answered_by: dict[int, int] = {}
        self.tools: dict[str, Any] = {}  # replay-cache rows of tool lists, by key (see _restore_tools)
        self._reads: list[threading.Thread] = []
        parent_ends: list[Connection] = []
        try:
            for _ in range(n):
                mine, theirs = ctx.Pipe(duplex=True)
                process = ctx.Process(
                    target=_child_main,
                    args=(theirs, engine, blobs, [*parent_ends, mine]),
                    name="chainmark-harness",
                    daemon=True,
                )
                process.start()
                theirs.close()
                parent_ends.append(mine)
                self.children.append(_Child(process, mine))
        except BaseException:
            self.close()
            raise

    @property
    def answered(self) -> int:
        """Calls the endpoint answered, over all children (see ``runner._unreachable``)."""
        return sum(self.answered_by.values())

    def start(
        self,
        config: dict[str, Any],
        db: Any,
        listener: Callable[[int, Any], None] | None,
    ) -> None:
        """Hand the children the run's settings and start listening to them (on the running loop)."""
        loop = asyncio.get_running_loop()
        self.db, self.listener = db, listener
        share = max(1, math.ceil(config["concurrency"] / len(self.children)))
        for index, child in enumerate(self.children):
            child.out = _Outbox(
                child.conn, loop, functools.partial(self._lost, child), functools.partial(self._unsendable, child)
            )
            child.out.put(("config", {**config, "concurrency": share, "procs": len(self.children)}))
            reader = threading.Thread(
                target=_read,
                args=(child.conn, loop, functools.partial(self._receive, child)),
                name=f"chainmark-proc-{index}",
                daemon=True,
            )
            reader.start()
            self._reads.append(reader)

    async def run(self, task: Any, trajectory_id: int) -> tuple[Any, dict[str, int]]:
        """Run one trajectory in the least busy child: (FinishedTrajectory, its usage counts). A child
        that dies first hands it to another; ``ProcsGone`` when none is left."""
        loop = asyncio.get_running_loop()
        while True:
            live = [c for c in self.children if c.alive]
            if not live:
                raise ProcsGone("the run's harness processes have all ended")
            child = min(live, key=lambda c: len(c.inflight))
            fut: asyncio.Future[Any] = loop.create_future()
            child.inflight[trajectory_id] = fut
            assert child.out is not None
            child.out.put(("run", trajectory_id, task))
            try:
                return await fut
            except ChildLost:
                continue
            except asyncio.CancelledError:
                if child.alive and child.out is not None:
                    child.out.put(("cancel", trajectory_id))
                raise
            finally:
                if child.inflight.get(trajectory_id) is fut:
                    del child.inflight[trajectory_id]

    def _receive(self, child: _Child, items: list[Any] | None) -> None:
        if items is None:
            self._lost(child)
            return
        for msg in items:
            kind = msg[0]
            if kind == "done":
                _, trajectory_id, item, counts, answered, shared = msg
                self.answered_by[id(child)] = answered
                _restore_tools(item, shared, self.tools)
                fut = child.inflight.get(trajectory_id)
                if fut is not None and not fut.done():
                    fut.set_result((item, counts))
            elif kind == "live":
                self.db.submit(write_live, msg[1], msg[2])
            elif kind == "db":
                self._db_call(child, *msg[1:])
            elif kind == "event" and self.listener is not None:
                self.listener(msg[1], msg[2])

    def _db_call(self, child: _Child, request: int, fn: Callable[..., Any], args: Any, kwargs: Any) -> None:
        def reply(fut: asyncio.Future[Any]) -> None:
            if fut.cancelled() or child.out is None:
                return
            exc = fut.exception()
            child.out.put(("reply", request, exc is None, fut.result() if exc is None else _portable(exc)))

        try:
            self.db.submit(fn, *args, **kwargs).add_done_callback(reply)
        except RuntimeError as exc:  # the database thread is shut down: the run is ending
            if child.out is not None:
                child.out.put(("reply", request, False, exc))

    def _unsendable(self, child: _Child, msg: Any, exc: Exception) -> None:
        """A database answer that does not pickle fails the call that asked; a task that does not
        fails its trajectory's run (a harness bug, said as such)."""
        problem = RuntimeError(f"could not be handed to a harness process: {type(exc).__name__}: {exc}")
        if msg[0] == "reply" and child.out is not None:
            child.out.put(("reply", msg[1], False, problem))
        elif msg[0] == "run":
            fut = child.inflight.get(msg[1])
            if fut is not None and not fut.done():
                fut.set_exception(problem)

    def _lost(self, child: _Child) -> None:
        if not child.alive:
            return
        child.alive = False
        if child.out is not None:
            child.out.closed = True
        for fut in child.inflight.values():
            if not fut.done():
                fut.set_exception(ChildLost())
        child.inflight.clear()

    def close(self, timeout: float = 5.0) -> None:
        """End every child: ask, then wait, then kill what is left."""
        for child in self.children:
            if child.alive and child.out is not None:
                child.out.flush()
            try:
                child.conn.send([_EXIT])
            except (OSError, ValueError):
                pass
        for child in self.children:
            child.process.join(timeout)
            if child.process.is_alive():
                child.process.kill()
                child.process.join(1)
            child.alive = False
            child.conn.close()
        for reader in self._reads:
            reader.join(1)


def _restore_tools(item: Any, shared: list[tuple[int, str]], known: dict[str, Any]) -> None:
    """Put back into a child's result the replay-cache rows of tool lists it sent in full before
    (``shared``: their places in the cache list and keys, see ``_share_tools``), and remember in
    ``known`` the rows it sent in full. A key never received in full (the result that carried it
    could not be sent) is left out: the next result that carries it in full writes its row."""
    for entry in item.cache:
        if entry.kind == "tools":
            known[entry.key] = entry
    for index, key in shared:
        entry = known.get(key)
        if entry is not None:
            item.cache.insert(index, entry)


def _portable(exc: BaseException) -> BaseException:
    """The exception itself if it pickles (a write failure must stay one in the child), else its text."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


# ----------------------------------------------------------------------------------------- child


class _DbProxy:
    """Stands in for ``DbRunner`` in a child: each call runs on the parent's database thread."""

    def __init__(self, out: _Outbox, dialect: str):
        self.out, self._dialect = out, dialect
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count()

    @property
    def dialect(self) -> str:
        return self._dialect

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> "asyncio.Future[Any]":
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if fn is write_live:  # a monitor's courtesy: sent, never answered
            self.out.put(("live", *args))
            fut.set_result(None)
            return fut
        request = next(self._ids)
        self.waiting[request] = fut
        self.out.put(("db", request, fn, args, kwargs))
        return fut

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self.submit(fn, *args, **kwargs)

    def answer(self, request: int, ok: bool, value: Any) -> None:
        fut = self.waiting.pop(request, None)
        if fut is None or fut.done():
            return
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def fail_all(self) -> None:
        for fut in self.waiting.values():
            if not fut.done():
                fut.set_exception(ChildLost("the run's parent process ended"))
        self.waiting.clear()


def _child_main(conn: Connection, engine: Engine, blobs: BlobStore, parent_ends: list[Connection]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    for end in parent_ends:  # so a parent's death reaches every child as end of file
        end.close()
    engine.dispose(close=False)  # the parent's connections stay the parent's
    try:
        asyncio.run(_child(conn, engine, blobs))
    finally:
        conn.close()


async def _child(conn: Connection, engine: Engine, blobs: BlobStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from evaluation.harness import sandbox
    from evaluation.harness.client import ModelClient, RetryPolicy, needs_tls, tls_context
    from store.heap import existing_objects_frozen
    from evaluation.harness.recorder import cache_lookup
    from evaluation.harness.trajectory_run import SERVICE_THREADS_MAX, RunProgress, _run_one, build_context

    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[list[Any] | None] = asyncio.Queue()
    finished = asyncio.Event()
    sent_tools: set[str] = set()  # tool lists whose cache rows the parent has had in full
    out = _Outbox(conn, loop, finished.set, lambda msg, exc: _unsendable(out, db, msg, exc, sent_tools))
    db = _DbProxy(out, name_of(engine))
    running: dict[int, asyncio.Task[Any]] = {}
    threading.Thread(target=_read, args=(conn, loop, inbox.put_nowait), name="chainmark-pipe", daemon=True).start()
    first = await inbox.get()
    if not first or first[0][0] != "config":
        return
    config = first[0][1]
    head = config["head"]
    sandbox.set_process_share(int(config["procs"]))
    share = int(config["concurrency"])
    replay = bool(head.config.get("replay"))
    client = ModelClient(
        head.endpoint,
        replay=replay,
        cache_lookup=lambda key: db.call(cache_lookup, key),
        retry=RetryPolicy(**(head.config.get("retry") or {})),
        concurrency=share,
        tls=tls_context() if needs_tls(head.endpoint.base_url) and not replay else None,
    )
    tool_pool = ThreadPoolExecutor(max(1, min(4, share)), thread_name_prefix="chainmark-tools")
    service_pool = ThreadPoolExecutor(max(1, min(SERVICE_THREADS_MAX, share)), thread_name_prefix="chainmark-service")
    listener = (lambda tid, event: out.put(("event", tid, event))) if config["events"] else None
    rc = build_context(config["run_id"], head, engine, blobs, db, client, tool_pool, service_pool, listener)  # type: ignore[arg-type]

    async def one(trajectory_id: int, task: Any) -> None:
        state = RunProgress(config["run_id"])
        item = await _run_one(rc, task, trajectory_id, state)
        item.recorder.listener = None  # a closure: not sent
        counts = {"tokens": state.tokens, "api_calls": state.api_calls}
        item, shared = _share_tools(item, sent_tools)
        out.put(("done", trajectory_id, item, counts, client.answered, shared))

    def handle(items: list[Any] | None) -> None:
        if items is None:
            finished.set()
            return
        for msg in items:
            kind = msg[0]
            if kind == "run":
                job = loop.create_task(one(msg[1], msg[2]))
                running[msg[1]] = job
                job.add_done_callback(functools.partial(_forget, running, msg[1]))
            elif kind == "cancel":
                held = running.get(msg[1])
                if held is not None:
                    held.cancel()
            elif kind == "reply":
                db.answer(msg[1], msg[2], msg[3])
            elif kind == "exit":
                finished.set()

    async def pump() -> None:
        while not finished.is_set():
            handle(await inbox.get())

    with existing_objects_frozen():
        pumping = loop.create_task(pump())
        try:
            await finished.wait()
        finally:
            pumping.cancel()
            db.fail_all()
            for job in list(running.values()):
                job.cancel()
            await asyncio.gather(*running.values(), return_exceptions=True)
            await client.close()
            tool_pool.shutdown(wait=False, cancel_futures=True)
            service_pool.shutdown(wait=False, cancel_futures=True)


def _share_tools(item: Any, sent: set[str]) -> tuple[Any, list[tuple[int, str]]]:
    """The item to send, without the replay-cache rows of tool lists this child has sent in full
    before, and where those rows go back (index in the cache list, key). A tool list is the same
    for every trajectory of a run and was most of each result's bytes: pickling and unpickling it
    again for every trajectory cost the parent about 0.15 ms a trajectory (bench_harness -j 256)."""
    shared = [(i, c.key) for i, c in enumerate(item.cache) if c.kind == "tools" and c.key in sent]
    if shared:
        keys = {key for _, key in shared}
        item.cache = [c for c in item.cache if not (c.kind == "tools" and c.key in keys)]
    sent.update(c.key for c in item.cache if c.kind == "tools")
    return item, shared


def _unsendable(out: _Outbox, db: _DbProxy, msg: Any, exc: Exception, sent_tools: set[str]) -> None:
    """A result that cannot be pickled becomes a failed trajectory saying why (the tool lists it
    carried in full go in full with the next result again); a database request that cannot be sent
    fails in the episode that made it; an event for a monitor is dropped."""
    from dataclasses import replace

    from evaluation.harness.recorder import Recorder

    if msg[0] == "done":
        item = msg[2]
        sent_tools.difference_update(c.key for c in item.cache if c.kind == "tools")
        recorder = Recorder()
        error = f"internal: the trajectory's result could not be handed to the run ({type(exc).__name__}: {exc})"
        recorder.error("internal", error)
        failed = replace(item, recorder=recorder, status="failed", error=error, cache=[], final_answer=None)
        out.put(("done", msg[1], failed, msg[3], msg[4], []))
    elif msg[0] == "db":
        db.answer(msg[1], False, RuntimeError(f"not sent to the run's database: {exc}"))


def _forget(running: dict[int, asyncio.Task[Any]], trajectory_id: int, job: asyncio.Task[Any]) -> None:
    if running.get(trajectory_id) is job:
        del running[trajectory_id]
    if not job.cancelled() and job.exception() is not None:  # a harness bug: say so, the parent will wait
        print(
            f"chainmark: trajectory {trajectory_id} crashed in a harness process: {job.exception()!r}", file=sys.stderr
        )
