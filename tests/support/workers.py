"""Waiting for a Textual app's workers in tests, on the workers' states rather than on time.

``app.workers.wait_for_complete()`` raises ``WorkerCancelled`` when a worker it waits for is
cancelled, which is what happens to an exclusive worker when the screen starts a newer one in the
same group (a reload). On a loaded machine that often happens during the wait. A cancelled worker
has nothing left to wait for, so here it counts as settled; a failed worker still fails the test.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from textual.worker import WorkerCancelled, WorkerState

BUSY = (WorkerState.PENDING, WorkerState.RUNNING)


async def wait_for_workers(app: Any, timeout: float = 60.0) -> None:
    """Return once no worker of ``app`` is pending or running (cancelled ones are done)."""
    deadline = time.monotonic() + timeout
    while True:
        # The app's change listener (PostgreSQL LISTEN, group "changes") runs as long as the app.
        busy = [w for w in app.workers if w.state in BUSY and w.group != "changes"]
        if not busy:
            return
        assert time.monotonic() < deadline, f"workers still busy after {timeout} s: {busy}"
        running = [w for w in busy if w.state == WorkerState.RUNNING]
        if not running:  # pending: the app's loop starts them on its next turn
            await asyncio.sleep(0.005)
            continue
        for worker in running:
            try:
                await worker.wait()
            except WorkerCancelled:
                pass  # replaced by a newer exclusive worker (or cancelled on purpose): nothing to wait for
