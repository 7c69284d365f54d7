"""Record/replay of service calls through the ``ReplayCache`` table.

The key is sha256 of a canonical JSON of (kind, request). Requests name images by their sha256 and
never contain API keys or base URLs, so a call recorded against one server replays anywhere, and
a cache can be shared without leaking secrets. Order of use: a recorded answer wins; otherwise a
configured backend is called and its answer recorded; otherwise a clear error says what to set.

With an engine in the context (the harness), no transaction is held across the live call: the
lookup is a short read, the call runs outside any transaction, and the row is written in its own
short transaction afterwards. A held SQLite write lock would serialise every service call of a run
and make concurrent ones fail with "database is locked". A busy database is retried a bounded number
of times and then raised as ``StoreBusy``, which ``execute`` never turns into a tool result.

Written in SQLAlchemy Core: a run's first service call does not build the SQLModel classes (a third
of a second of one thread holding the GIL while the run's calls are in flight).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, OperationalError

from evaluation.tools.result import StoreBusy, ToolContext, ToolError
from store import read_only
from store.clock import utcnow
from store.core_tables import replaycache
from store.speedups import enabled

T = TypeVar("T")

BUSY_ATTEMPTS = 4
BUSY_BACKOFF_S = 0.25


def canonical(kind: str, request: dict[str, Any]) -> str:
    return json.dumps({"kind": kind, "request": request}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(kind: str, request: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(kind, request).encode("utf-8")).hexdigest()


def _busy(exc: OperationalError) -> bool:
    text = str(exc.orig if exc.orig is not None else exc).lower()
    return "locked" in text or "busy" in text


def in_short_transaction(ctx: ToolContext, fn: Callable[[Any], T], *, write: bool) -> T:
    """``fn(connection)`` in its own short transaction on ``ctx.engine`` (retried while the database
    is busy), or ``fn(session)`` in the caller's ``ctx.session`` when the caller owns the transaction."""
    if ctx.engine is None:
        assert ctx.session is not None
        return fn(ctx.session)
    engine = ctx.engine if write else read_only(ctx.engine)
    for attempt in range(1, BUSY_ATTEMPTS + 1):
        try:
            with engine.begin() as conn:
                return fn(conn)
        except OperationalError as exc:
            if not _busy(exc):
                raise
            if attempt == BUSY_ATTEMPTS:
                raise StoreBusy(f"the database stayed locked through {BUSY_ATTEMPTS} attempts: {exc.orig}") from exc
            time.sleep(BUSY_BACKOFF_S * attempt)
    raise AssertionError("unreachable")


def _has_store(ctx: ToolContext) -> bool:
    return ctx.engine is not None or ctx.session is not None


def lookup(ctx: ToolContext, kind: str, request: dict[str, Any]) -> Any | None:
    if not _has_store(ctx):
        return None
    key = request_key(kind, request)
    c = replaycache.c
    return in_short_transaction(
        ctx, lambda s: s.execute(sa.select(c.response).where(c.key == key)).scalar(), write=False
    )


def record(ctx: ToolContext, kind: str, request: dict[str, Any], response: Any) -> None:
    """Keep the first recorded answer for a request; a concurrent call that recorded it first wins.
    With an engine, the row is written before this returns, in one transaction with the rows other
    threads are recording at the same moment (``_GroupWrite``)."""
    if not _has_store(ctx):
        return
    row = {"key": request_key(kind, request), "kind": kind, "request": request, "response": response}
    if ctx.engine is None:
        _write_rows(ctx.session, [row])
    elif enabled("replay_group_write"):
        _group_for(ctx.engine).write(ctx, row)
    else:
        _write_batch(ctx, [row])


def _write_rows(s: Any, rows: list[dict[str, Any]]) -> None:
    """Insert the rows whose key is not recorded yet (the first row of a key wins within ``rows`` too)."""
    fresh: dict[str, dict[str, Any]] = {}
    for row in rows:
        fresh.setdefault(row["key"], row)
    keys = list(fresh)
    for start in range(0, len(keys), 500):  # far below any database's limit on bound parameters
        chunk = keys[start : start + 500]
        for (key,) in s.execute(sa.select(replaycache.c.key).where(replaycache.c.key.in_(chunk))):
            fresh.pop(key, None)
    if fresh:
        now = utcnow()
        s.execute(sa.insert(replaycache), [{**row, "created_at": now} for row in fresh.values()])


class _Pending:
    """One queued row: written yet, and the failure its batch met, if any."""

    __slots__ = ("row", "written", "error")

    def __init__(self, row: dict[str, Any]):
        self.row = row
        self.written = False
        self.error: BaseException | None = None


class _GroupWrite:
    """Rows recorded at the same moment by many threads, written by whichever of them holds the turn.

    Each write is a transaction of its own, and SQLite takes its write lock when one begins: dozens of
    service calls answered together each waited for the lock in SQLite's busy handler, which sleeps in
    growing steps, so the last of 32 rows was written ≈ 0.2 s after its answer came. Here a thread
    queues its row and takes the turn; if the writer before it already wrote the row, it is done,
    otherwise it writes every queued row in one transaction. Nothing returns before its row is written."""

    def __init__(self) -> None:
        self.queue_lock = threading.Lock()
        self.turn = threading.Lock()
        self.queued: list[_Pending] = []

    def write(self, ctx: ToolContext, row: dict[str, Any]) -> None:
        mine = _Pending(row)
        with self.queue_lock:
            self.queued.append(mine)
        with self.turn:
            if not mine.written:
                with self.queue_lock:
                    batch, self.queued = self.queued, []
                try:
                    _write_batch(ctx, [p.row for p in batch])
                except BaseException as exc:  # every row of the batch gets the failure (raised below)
                    for p in batch:
                        p.error = exc
                for p in batch:
                    p.written = True
        if mine.error is not None:
            if isinstance(mine.error, StoreBusy):
                raise StoreBusy(str(mine.error)) from mine.error
            raise mine.error


def _write_batch(ctx: ToolContext, rows: list[dict[str, Any]]) -> None:
    try:
        in_short_transaction(ctx, lambda s: _write_rows(s, rows), write=True)
    except IntegrityError:  # another process recorded one of the keys meanwhile: row by row, theirs wins
        for row in rows:
            try:
                in_short_transaction(ctx, lambda s, row=row: _write_rows(s, [row]), write=True)  # type: ignore[misc]
            except IntegrityError:
                pass


_GROUPS: weakref.WeakKeyDictionary[Any, _GroupWrite] = weakref.WeakKeyDictionary()
_GROUPS_LOCK = threading.Lock()


def _group_for(engine: Any) -> _GroupWrite:
    """One queue per engine, gone with it."""
    with _GROUPS_LOCK:
        group = _GROUPS.get(engine)
        if group is None:
            group = _GROUPS[engine] = _GroupWrite()
        return group


def call(
    ctx: ToolContext,
    tool: str,
    kind: str,
    request: dict[str, Any],
    live: Callable[[], Any],
    missing_backend: str | None,
) -> tuple[Any, bool]:
    """The response for ``request`` and whether it was replayed.

    ``missing_backend`` is None when the live backend is configured, else the sentence telling the
    user what to configure; it becomes the error when there is no recorded answer either.
    """
    cached = lookup(ctx, kind, request)
    if cached is not None:
        return cached, True
    if ctx.settings.replay_only:
        raise ToolError(
            f"{tool}: no recorded response for this call and replay-only mode is on "
            "(CHAINMARK_REPLAY_ONLY); record it first with the service configured"
        )
    if missing_backend is not None:
        where = "" if _has_store(ctx) else " (no database session, so no recorded calls either)"
        raise ToolError(f"{tool}: no backend configured and no recorded response{where}: {missing_backend}")
    response = live()
    record(ctx, kind, request, response)
    return response, False
