"""Keys typed while a form gets its choices: held, then pressed in order once the form can act on them.

The run launcher's drop-downs are filled by a worker. Keys that reached the form before that were
lost: Enter opened an empty list and the arrows moved nothing, so a quick ``n``, Enter, Down, Enter
chose nothing. Now the app holds every key from the terminal (``KeyHold.take``, called by the app
before it dispatches a key) from the moment such a form is asked for until its choices are in; then
``release`` presses the held keys again one at a time.

Each key is pressed only when the UI has finished with the one before: ``settled`` waits until every
message pump (the app, its screens and widgets) has an empty queue, no pending callback and is
waiting for its next message. That is a condition on the UI's state, not a wait for time or for the
CPU to look idle: Enter on a drop-down moves the focus to its list through ``call_later``, and the
Down after it must go to that list, however long a starved process takes to get there.

The same wait orders every key (``KeyOrder``). Textual hands a key to the widget focused when the app
reads it, while that widget's bindings (Tab's focus move, an input's Backspace) act only once the key
has come back up to the app through every queue in between. Keys that arrive together (a fast typist,
a paste, a starved process reading several at once) therefore went to the field focused before the
Tab, and a Backspace was applied after the letter typed behind it. So a key from the terminal goes on
only once the UI has settled after the one before.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
from collections import deque
from typing import Any

from textual import events
from textual.screen import Screen


def _idle(pump: Any, task: asyncio.Task[Any] | None) -> bool:
    """Nothing queued for ``pump`` and its task (if known) waiting for its next message."""
    if pump._next_callbacks:
        return False
    if isinstance(pump, Screen) and pump._callbacks:  # ``call_after_refresh`` work, run after a repaint
        return False
    if "_message_queue" not in vars(pump):  # never sent a message (the queue is made on first use)
        return True
    queue = pump._message_queue
    if not queue.empty() or pump._pending_message is not None:
        return False
    if task is None or task.done():
        return True
    # Idle means suspended on the queue's "ready" event (textual._queue.Queue.get); a task suspended on
    # anything else is inside a handler, and one suspended on nothing is about to run.
    waiter = getattr(task, "_fut_waiter", None)
    return waiter is not None and any(waiter is w for w in queue.ready_event._waiters)


def quiet(app: Any, app_task: asyncio.Task[Any] | None) -> bool:
    """True when no message pump of ``app`` has work left."""
    if not _idle(app, app_task):
        return False
    pumps = {id(p): p for p in [*app.screen_stack, *list(app._registry)]}
    return all(_idle(p, p._task) for p in pumps.values())


GIVE_UP_TURNS = 20_000
"""A liveness guard, not the mechanism: a UI that never once goes quiet in this many checks (at least
40 s of spaced-out checks) stops holding keys rather than keep the keyboard from working."""


async def settled(app: Any, app_task: asyncio.Task[Any] | None, give_up: int = GIVE_UP_TURNS) -> bool:
    """Return once ``quiet(app)`` (True), checked at every turn of the event loop so every pump runs
    between two checks; after a few turns the checks are spaced out to leave the CPU to the UI.
    False: it never went quiet in ``give_up`` checks."""
    turns = 0
    while not quiet(app, app_task):
        turns += 1
        if turns > give_up:
            return False
        await asyncio.sleep(0 if turns < 50 else 0.002)
    return True


class KeyHold:
    """The keys held for one form, in the order they were typed."""

    def __init__(self, app: Any, passing: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.passing = passing  # keys never held (the app's priority keys: quit works while loading)
        self.keys: list[tuple[float, int, str, str | None]] = []  # (typed at, arrival, key, character)
        self.holding = True
        self._arrivals = itertools.count()
        self._pressed: list[events.Key] = []  # the held keys pressed again: they pass (also on their way back)
        self._app_task: asyncio.Task[Any] | None = None

    def take(self, event: events.Key) -> bool:
        """Hold ``event`` if this hold is on; False lets it through. Keys come here straight from the
        terminal and also back from the screen below (a key typed just after the one that opened the
        form was already on its way up through the old screen when the hold began, and would act on the
        new screen's bindings now): both are held, in the order they were typed (their time stamp)."""
        if not self.holding or event.key in self.passing or any(event is p for p in self._pressed):
            return False
        bisect.insort(self.keys, (event.time, next(self._arrivals), event.key, event.character))
        return True

    async def release(self) -> None:
        """Press the held keys one at a time, each once the UI has settled after the one before; keys
        typed meanwhile are held behind them. The hold ends when none is left."""
        self._app_task = getattr(self.app, "pump_task", None)
        try:
            calm = await settled(self.app, self._app_task)  # the form's own focus move, first
            while self.keys:
                _, _, key, character = self.keys.pop(0)
                pressed = events.Key(key, character)
                self._pressed.append(pressed)
                self.app.post_message(pressed)
                if calm:
                    calm = await settled(self.app, self._app_task)
        finally:
            self._pressed.clear()
            self.holding = False  # no await since the queue was seen empty: no key can slip past
            self.app.end_key_hold(self)

    def drop(self) -> None:
        """Stop holding and forget the held keys (the form went away before it was ready)."""
        self.keys.clear()
        self.holding = False
        self.app.end_key_hold(self)


ORDER_GIVE_UP_TURNS = 1_000
"""``KeyOrder``'s liveness guard (at least 2 s of spaced-out checks): a UI that stays busy that long
gets the keys waiting behind it at once, as Textual alone would hand them over."""


class KeyOrder:
    """Keys from the terminal reach the UI one at a time, each once the one before has been handled.

    ``admit`` is asked by the app for every key from the terminal before it dispatches it: the first
    goes through and starts ``_pace``; keys arriving while it is on their way wait here, in order, and
    ``_pace`` posts each again once the UI has settled (focus moved, bindings acted, forms rebuilt), so
    it goes to the widget focused by then."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.waiting: deque[events.Key] = deque()
        self._released: list[events.Key] = []  # waiting keys posted again: they pass
        self._pacer: asyncio.Task[None] | None = None

    def admit(self, event: events.Key) -> bool:
        """True: dispatch ``event`` now. False: it waits behind the key still on its way."""
        for index, released in enumerate(self._released):
            if event is released:
                del self._released[index]
                return True
        if self._pacer is None:
            self._pacer = asyncio.create_task(self._pace(), name="chainmark key order")
            return True
        self.waiting.append(event)
        return False

    async def _pace(self) -> None:
        """Post the waiting keys again one at a time, each after the UI has settled; end when none is
        left (no await between the last check and the end, so no key can slip past)."""
        try:
            calm = True
            while True:
                if calm:
                    calm = await settled(self.app, getattr(self.app, "pump_task", None), ORDER_GIVE_UP_TURNS)
                if not self.waiting or not self.app.is_running:
                    return
                key = self.waiting.popleft()
                self._released.append(key)
                self.app.post_message(key)
                if not calm:
                    await asyncio.sleep(0)
        finally:
            self._pacer = None

    def stop(self) -> None:
        """The app is closing: forget the waiting keys and stop pacing."""
        self.waiting.clear()
        if self._pacer is not None:
            self._pacer.cancel()
