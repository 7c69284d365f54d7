"""Pilot's "wait until the app is idle" as a condition instead of a CPU-time guess.

Textual's ``wait_for_idle`` (behind every ``pilot.press`` key, twice, and every ``pilot.pause()``)
sleeps in 20 ms slices until the *process* used under 1 ms of CPU in one slice, for up to 1 s. On a
busy 2-core machine the slices stretch and any thread's CPU counts, so a test spent about half its
time there (measured: 420 waits, 77 s of a 163 s run of two TUI files under load). Here the app
is idle when every message pump of the app and its screen has handled what was queued before the
wait and has nothing queued since: the state a test can assert on, reached as soon as it is true.
Workers (threads) are not waited for, as before: tests wait for them with ``wait_for_workers``.
"""

from __future__ import annotations

import asyncio
from time import monotonic

import textual.app
import textual.pilot
from textual._context import active_app
from textual.pilot import Pilot, WaitForScreenTimeout

ROUNDS_CAP = 50  # a screen that keeps posting to itself (a timer) is idle enough after this many rounds


def _pumps(app: textual.app.App) -> list:  # type: ignore[type-arg]
    try:
        return [app, *app.screen.walk_children(with_self=True)]
    except Exception:  # no screen yet, or the app is closing
        return [app]


def _queued(app: textual.app.App) -> bool:  # type: ignore[type-arg]
    return any(pump.message_queue_size for pump in _pumps(app))


async def wait_until_quiet(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
    """Return once the active app's pumps have drained their queues (at most ``max_sleep`` s, and no
    sooner than ``min_sleep`` s, as Textual's ``wait_for_idle`` promises)."""
    start = monotonic()
    await asyncio.sleep(0)  # a message sent from the driver is queued by the loop's next turn
    try:
        app = active_app.get()
    except LookupError:
        app = None
    if app is not None and app.is_running:
        pilot = Pilot(app)
        for _ in range(ROUNDS_CAP):
            try:
                handled = await pilot._wait_for_screen(timeout=max(max_sleep, 0.05))
            except WaitForScreenTimeout:
                break  # as Textual's wait: give up after max_sleep, the test's own wait decides
            if not handled:
                break  # the app raised: the test reports that
            await asyncio.sleep(0)  # let each pump finish its idle handling after the last message
            if not _queued(app) or monotonic() - start >= max_sleep:
                break
    rest = min_sleep - (monotonic() - start)
    if rest > 0:
        await asyncio.sleep(rest)


def install() -> None:
    """Use the condition for Pilot's key presses and pauses in this test process."""
    textual.app.wait_for_idle = wait_until_quiet  # type: ignore[attr-defined]
    textual.pilot.wait_for_idle = wait_until_quiet  # type: ignore[attr-defined]
