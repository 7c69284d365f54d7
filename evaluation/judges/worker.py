"""The judging half of ``chainmark worker``: claim queued judge items and judge them, ``-j`` at once.

Judge calls are blocking (``evaluation.modelcall.sync_client``), so each item runs in a thread of
its own pool; claims are short transactions on a separate thread so they never queue behind a
judge. The worker's heartbeat renews the items with its other claims (same token).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from evaluation.judges import queue as jq
from evaluation.judges.runner import SetupCache
from store import session_scope
from store.blobs import BlobStore


@dataclass
class JudgeTally:
    """What this worker judged: items finished (judged / failed), taken over by others (lost)."""

    judged: int = 0
    failed: int = 0
    lost: int = 0
    verdicts: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    running: int = 0
    last_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _fail(engine: Engine, token: str, item: jq.JudgeItem, reason: str, actor: str | None) -> bool:
    """Finish an item that broke in an unexpected way as failed (fenced), so no worker loops on it."""
    try:
        with session_scope(engine, actor=actor) as s:
            return jq.finish_failed(s, token, item, reason)
    except Exception:  # noqa: BLE001 - the claim expires and another worker tries
        return False


def _claim(
    engine: Engine, token: str, n: int, ttl: float, run_ids: list[int] | None, actor: str | None
) -> list[jq.JudgeItem]:
    with session_scope(engine, actor=actor) as s:
        return jq.claim(s, token, n, ttl, run_ids)


async def work_on_judges(
    engine: Engine,
    blobs: BlobStore,
    token: str,
    tally: JudgeTally,
    *,
    concurrency: int,
    ttl: float,
    run_ids: list[int] | None,
    stop: asyncio.Event,
    actor: str | None = None,
    progress: Callable[[JudgeTally], None] | None = None,
) -> None:
    """Claim and judge items until none is free (or ``stop``); items running when ``stop`` comes are
    finished first (a judge call cannot be interrupted midway)."""
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(concurrency, thread_name_prefix="chainmark-judge")
    claim_pool = ThreadPoolExecutor(1, thread_name_prefix="chainmark-judge-claim")
    running: dict[asyncio.Future[dict[str, Any]], jq.JudgeItem] = {}
    setups = SetupCache()  # the judge, endpoint and template, settled once for many items
    try:
        while True:
            if not stop.is_set() and len(running) < concurrency:
                got = await loop.run_in_executor(
                    claim_pool, _claim, engine, token, concurrency - len(running), ttl, run_ids, actor
                )
                for item in got:
                    fut = loop.run_in_executor(pool, jq.judge_item, engine, blobs, token, item, actor, setups)
                    running[asyncio.ensure_future(fut)] = item
            tally.running = len(running)
            if not running:
                return
            done, _ = await asyncio.wait(list(running), return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                item = running.pop(fut)
                try:
                    stats = fut.result()
                except Exception as exc:  # noqa: BLE001 - one broken item must not stop the others
                    reason = f"{type(exc).__name__}: {exc}"
                    ok = await loop.run_in_executor(claim_pool, _fail, engine, token, item, reason, actor)
                    stats = {"lost": not ok, "error": reason}
                if stats.get("lost"):
                    tally.lost += 1
                    continue
                tally.verdicts += int(stats.get("verdicts") or 0)
                tally.model_calls += int(stats.get("model_calls") or 0)
                tally.cache_hits += int(stats.get("cache_hits") or 0)
                if stats.get("error"):
                    tally.failed += 1
                    tally.last_error = str(stats["error"])
                else:
                    tally.judged += 1
            tally.running = len(running)
            if progress:
                progress(tally)
    finally:
        pool.shutdown(wait=True)
        claim_pool.shutdown(wait=True)
